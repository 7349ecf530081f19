"""Labels in the results store (schema v6): add, read the latest per annotator and item, undo, the checks that
keep a label on its own run, and the migration of a version-4 store; on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect, text

from ragassay.errors import StoreError
from ragassay.labels import Label
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.migrations import migrate

from labels_helpers import OTHER_RUN_ID, RUN_ID, SYSTEMS, write_label_run


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def _label(sample="q01", value=1.0, at=100.0, annotator="ann", **kw) -> Label:
    target = kw if kw else {"system": SYSTEMS[0]}
    base = {"run_id": RUN_ID, "sample_id": sample, "rubric": "correct", "rubric_version": 1}
    return Label(**base, **target, annotator=annotator, value=value, labelled_at=at)


@pytest.fixture
def store(url):
    store = open_store(url)
    write_label_run(store, RUN_ID, samples=4)
    yield store
    store.close()


def test_latest_label_per_annotator_and_item_counts_and_undo_restores_the_earlier(store):
    store.add_label(_label(value=0.0, at=100.0))
    store.add_label(_label(value=1.0, at=101.0))  # the same annotator changes their mind
    store.add_label(_label(value=0.0, at=102.0, annotator="bob"))
    store.add_label(_label(sample="q02", value=1.0, at=103.0))
    got = {(x.annotator, x.sample_id): x.value for x in store.labels(RUN_ID)}
    assert got == {("ann", "q01"): 1.0, ("bob", "q01"): 0.0, ("ann", "q02"): 1.0}
    undone = store.undo_label(RUN_ID, "correct", "ann")
    assert (undone.sample_id, undone.value) == ("q02", 1.0)
    assert [x.sample_id for x in store.labels(RUN_ID, annotator="ann")] == ["q01"]
    store.undo_label(RUN_ID, "correct", "ann")  # now the 1.0 on q01: the earlier 0.0 counts again
    assert [(x.sample_id, x.value) for x in store.labels(RUN_ID, annotator="ann")] == [("q01", 0.0)]
    assert store.labels(RUN_ID, "faithful") == []
    assert store.undo_label(RUN_ID, "faithful", "ann") is None


def test_a_pair_is_one_item_whichever_order_it_was_shown_in(store):
    store.add_label(_pair(SYSTEMS, -1.0, 100.0, "ann"))
    store.add_label(_pair(tuple(reversed(SYSTEMS)), 2.0, 101.0, "bob"))
    store.add_label(_pair(SYSTEMS, 1.0, 102.0, "ann"))
    labels = store.labels(RUN_ID, "preference")
    assert [(x.annotator, x.systems, x.value) for x in labels] == [
        ("bob", tuple(reversed(SYSTEMS)), 2.0),
        ("ann", SYSTEMS, 1.0),
    ]
    assert labels[0].item_key == labels[1].item_key


def _pair(systems, value, at, annotator) -> Label:
    return Label(
        run_id=RUN_ID,
        sample_id="q00",
        systems=systems,
        rubric="preference",
        rubric_version=1,
        annotator=annotator,
        value=value,
        labelled_at=at,
    )


def test_a_label_reaches_only_an_item_of_its_own_run(store):
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.add_label(_label().model_copy(update={"run_id": "nope"}))
    with pytest.raises(StoreError, match="has no sample 'q99'"):
        store.add_label(_label(sample="q99"))
    with pytest.raises(StoreError, match="no answer of system 'ghost'"):
        store.add_label(_label(system="ghost"))
    other = write_label_run(store, OTHER_RUN_ID, samples=6)  # q05 is a sample of the other run only
    with pytest.raises(StoreError, match="has no sample 'q05'"):
        store.add_label(_label(sample="q05"))
    store.add_label(_label(sample="q05").model_copy(update={"run_id": other}))
    assert store.labels(RUN_ID) == [] and len(store.labels(other)) == 1


def test_add_labels_is_all_or_nothing_idempotent_and_names_the_source(store):
    labels = [_label(sample="q00"), _label(sample="q01", at=101.0)]
    assert store.add_labels(labels) == 2
    assert store.add_labels(labels) == 0  # the same labels again: nothing added
    assert len(store.labels(RUN_ID)) == 2
    with pytest.raises(StoreError, match="f.jsonl:7: run labelrun-000 has no sample 'q77'"):
        store.add_labels([_label(sample="q02", at=200.0), _label(sample="q77")], ["f.jsonl:3", "f.jsonl:7"])
    assert {x.sample_id for x in store.labels(RUN_ID)} == {"q00", "q01"}  # q02 was rolled back


def test_a_version_4_store_is_migrated_to_one_with_labels(url):
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrate(conn, 4) == [1, 2, 3, 4]
        assert not inspect(conn).has_table("labels")
    engine.dispose()
    store = open_store(url)  # migrates 4 -> 5 (traces) -> 6 (labels)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("select version from schema_version")).all() == [(SCHEMA_VERSION,)]
            columns = {c["name"] for c in inspect(conn).get_columns("labels")}
        assert {"run_id", "sample_id", "system", "systems_json", "rubric", "annotator", "value"} <= columns
    finally:
        store.close()
