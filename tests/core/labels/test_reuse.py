"""Labels reused across runs by the digest of the answers they judged (:func:`ragassay.labels.reuse.reusable_labels`
through :func:`ragassay.results.read_reusable_labels`): a new run with the same answers reuses them; a changed
answer (one answer, or one of a pair's two) is never scored with its old label, which is counted stale; a label of
another run without a digest is not used; the store refuses a label that names answers its run does not hold."""

from __future__ import annotations

import pytest

from ragassay.errors import StoreError
from ragassay.labels import Label
from ragassay.labels.digest import answers_digest
from ragassay.labels.reuse import reusable_labels
from ragassay.results import read_reusable_labels, read_run

from labels_helpers import OTHER_RUN_ID, RUN_ID, SYSTEMS, open_label_store, with_stored_digest, write_label_run

THIRD_RUN_ID = "thirdrun-0003"


def _label(run_id=RUN_ID, sample="q00", value=1.0, at=1.0, annotator="ann", **target) -> Label:
    target = target or {"system": SYSTEMS[0]}
    rubric = "preference" if "systems" in target else "correct"
    return Label(
        run_id=run_id, sample_id=sample, rubric=rubric, rubric_version=1, annotator=annotator, value=value,
        labelled_at=at, **target,
    )  # fmt: skip


GIVEN = [
    _label(sample="q00", value=1.0, at=1.0),
    _label(sample="q01", value=0.0, at=2.0, system=SYSTEMS[1]),
    _label(sample="q02", value=-2.0, at=3.0, systems=(SYSTEMS[1], SYSTEMS[0])),
]


@pytest.fixture
def store(tmp_path):
    store = open_label_store(tmp_path / "results.db", samples=6)
    store.add_labels(GIVEN)
    yield store
    store.close()


def test_a_new_run_with_the_same_answers_reuses_every_label(store):
    write_label_run(store, OTHER_RUN_ID, samples=6)
    reuse = read_reusable_labels(store, read_run(store, OTHER_RUN_ID, payloads=True))
    assert [(x.run_id, x.sample_id, x.value) for x in reuse.labels] == [
        (OTHER_RUN_ID, "q00", 1.0),
        (OTHER_RUN_ID, "q01", 0.0),
        (OTHER_RUN_ID, "q02", -2.0),
    ]
    assert [x.output_digest for x in reuse.labels] == [with_stored_digest(x).output_digest for x in GIVEN]
    assert reuse.reused == 3 and reuse.reused_from == {RUN_ID: 3} and not reuse.stale
    assert reuse.describe() == "3 label(s) used; 3 reused from 1 other run(s) with the same answers"
    own = read_reusable_labels(store, read_run(store, RUN_ID, payloads=True))
    assert len(own.labels) == 3 and own.reused == 0 and own.reused_from == {RUN_ID: 3}


def test_a_changed_answer_is_never_scored_with_its_old_label_and_is_counted_stale(store):
    # system 0 answers q00 differently; system 0's answer to q02 changes too, so the pair's label is stale as well
    write_label_run(store, THIRD_RUN_ID, samples=6, changed={(0, 0), (0, 2)})
    reuse = read_reusable_labels(store, read_run(store, THIRD_RUN_ID, payloads=True))
    assert [(x.sample_id, x.system, x.value) for x in reuse.labels] == [("q01", SYSTEMS[1], 0.0)]
    assert [(x.sample_id, x.rubric) for x in reuse.stale] == [("q00", "correct"), ("q02", "preference")]
    assert reuse.as_dict() == {
        "run_id": THIRD_RUN_ID,
        "used": 1,
        "reused": 1,
        "reused_from": {RUN_ID: 1},
        "stale": 2,
        "unmatched": 0,
        "undigested": 0,
    }
    assert "2 stale (the answer changed since it was labelled; not used)" in reuse.describe()
    only_correct = read_reusable_labels(store, read_run(store, THIRD_RUN_ID, payloads=True), "correct")
    assert len(only_correct.labels) == 1 and len(only_correct.stale) == 1


def test_labels_from_a_file_count_only_where_their_digest_is_that_of_the_run(store):
    write_label_run(store, OTHER_RUN_ID, samples=6)
    run = read_run(store, OTHER_RUN_ID, payloads=True)
    matching = with_stored_digest(_label(sample="q03", annotator="eve"))
    other_text = _label(sample="q04", annotator="eve").model_copy(update={"output_digest": answers_digest(["old"])})
    no_digest = _label(sample="q05", annotator="eve")  # of RUN_ID, written by hand: what it judged is unknown
    own_no_digest = _label(run_id=OTHER_RUN_ID, sample="q05", annotator="fay")  # the run's own: its answer
    absent = _label(sample="q99", annotator="eve")
    reuse = reusable_labels(run, [matching, other_text, no_digest, own_no_digest, absent])
    assert [(x.annotator, x.sample_id) for x in reuse.labels] == [("eve", "q03"), ("fay", "q05")]
    assert reuse.labels[1].output_digest == with_stored_digest(own_no_digest).output_digest  # filled in
    assert reuse.stale == [other_text] and reuse.undigested == 1 and reuse.unmatched == 1


def test_an_annotators_latest_label_of_an_item_counts_wherever_it_was_given(store):
    write_label_run(store, OTHER_RUN_ID, samples=6)
    store.add_label(_label(run_id=OTHER_RUN_ID, sample="q00", value=0.0, at=5.0))  # ann changes their mind there
    store.add_label(_label(run_id=OTHER_RUN_ID, sample="q00", value=1.0, at=6.0, annotator="bob"))
    reuse = read_reusable_labels(store, read_run(store, RUN_ID, payloads=True), "correct")
    assert sorted((x.annotator, x.sample_id, x.value) for x in reuse.labels) == [
        ("ann", "q00", 0.0),
        ("ann", "q01", 0.0),
        ("bob", "q00", 1.0),
    ]
    assert reuse.reused_from == {OTHER_RUN_ID: 2, RUN_ID: 1}


def test_the_store_refuses_a_label_that_judged_other_answers_than_its_run_holds(store):
    wrong = _label(sample="q03").model_copy(update={"output_digest": answers_digest(["another answer"])})
    with pytest.raises(StoreError, match="judged other answer text .* sample 'q03'"):
        store.add_labels([wrong], ["labels.jsonl:7"])
    assert len(store.labels(RUN_ID)) == 3
    right = with_stored_digest(_label(sample="q03"))
    assert store.add_labels([right]) == 1 and store.add_labels([_label(sample="q03")]) == 0  # the same label
