"""Hypothesis testing (section 4.2, Table 2 shape): clusters, shared gap groups, sampling and modular rows."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragassay.analysis.groups import Outcome
from ragassay.analysis.hypotheses import cluster_of, evaluate_hypothesis, hypothesis_table
from ragassay.analysis.jsonable import jsonable
from ragassay.config.analysis import Hypothesis, SamplingSettings

LONG = Hypothesis(name="long queries hurt", attribute="query_length", robust=["short"], non_robust=["long"])


def make(group: str, short: str, long: str, table: str = "T", docs=("a",)) -> list[Outcome]:
    """Outcomes of one group: a flag string per form, e.g. short='11', long='10'."""
    out = []
    for form, flags in (("short", short), ("long", long)):
        for i, flag in enumerate(flags):
            retrieved = frozenset(docs) if flag == "1" else frozenset(["noise"] if i % 2 else docs)
            out.append(
                Outcome(
                    f"{group}/{form}{i}",
                    group,
                    flag == "1",
                    {"query_length": form, "table": table},
                    retrieved,
                    frozenset(docs),
                )
            )
    return out


DATA = (
    make("g1", "11", "10")
    + make("g2", "11", "00")
    + make("g3", "00", "00")
    + make("g4", "11", "11", "U")
    + make("g5", "1", "0", "U")
    + [Outcome("other", "g1", False, {"query_length": "medium"})]
)


def test_clusters_come_from_the_attribute():
    assert [cluster_of(o, LONG) for o in DATA[:4]] == ["robust", "robust", "non_robust", "non_robust"]
    assert cluster_of(DATA[-1], LONG) is None


def test_rows_per_cluster_with_gap_groups_common_to_both_excluded():
    base, modular, truth = evaluate_hypothesis(DATA, LONG)
    # g3 is a gap in both clusters: out of R for both. g2's long queries all fail but g2 is non-robust.
    assert (base.robust.total, base.robust.correct, base.robust.gap_total) == (9, 7, 2)
    assert (base.non_robust.total, base.non_robust.correct, base.non_robust.gap_total) == (9, 3, 2)
    assert base.robust.robustness == pytest.approx(1.0) and base.non_robust.robustness == pytest.approx(3 / 7)
    assert base.robust.accuracy == pytest.approx(7 / 9) and base.non_robust.accuracy == pytest.approx(3 / 9)
    assert base.separates("R") is True and base.separates("Acc") is True
    assert base.label == "All samples" and modular.label == "All samples +Modular Evaluation (Retrieval)"
    assert truth.modular == "ground_truth"
    # the long wrong answers at even positions retrieved the same documents as correct ones: LM failures
    assert modular.excluded_lm == 2 and modular.non_robust.total == 7
    assert modular.non_robust.robustness == pytest.approx(3 / 5)


def test_no_ground_truth_row_without_reference_documents():
    plain = [Outcome(o.question_id, o.group_id, o.correct, o.attributes, o.retrieved) for o in DATA]
    assert [r.modular for r in evaluate_hypothesis(plain, LONG)] == [None, "context"]


def test_table_has_every_sampling_variant_and_is_reproducible():
    sampling = SamplingSettings.model_validate(
        {
            "stratified": {"per_group": 1, "by": "query_length", "seed": 1},
            "unbalanced": {"reduce": {"U": 1.0}, "seed": 1},
        }
    )
    rows = hypothesis_table(DATA, LONG, sampling)
    assert [r.sampling for r in rows] == ["All samples"] * 3 + ["Unbalanced Sampling (US)"] * 3 + [
        "Stratified Sampling (SS)"
    ] * 3
    us, ss = rows[3], rows[6]
    assert us.robust.total == 6 and us.non_robust.total == 6  # table U removed entirely
    assert ss.robust.total == ss.non_robust.total == 5  # one per form per group
    assert rows == hypothesis_table(DATA, LONG, sampling)


def test_a_value_in_both_clusters_is_refused():
    with pytest.raises(ValidationError, match="values in both clusters: short"):
        Hypothesis(name="x", attribute="a", robust=["short"], non_robust=["short", "long"])


def test_each_answer_has_a_seeded_interval_of_the_difference():

    base = evaluate_hypothesis(DATA, LONG)[0]
    acc, r = base.acc_test, base.r_test
    assert acc.difference == pytest.approx(7 / 9 - 3 / 9) and (acc.n_first, acc.n_second) == (9, 9)
    assert r.difference == pytest.approx(1.0 - 3 / 7) and (r.n_first, r.n_second) == (7, 7)  # gap g3 left out
    assert acc.ci_low <= acc.difference <= acc.ci_high
    assert acc == evaluate_hypothesis(DATA, LONG)[0].acc_test  # seeded
    assert jsonable(base)["acc_test"]["answer"] == acc.answer and jsonable(base)["label"] == base.label


def test_answers_yes_no_or_not_detectable_by_the_interval():
    from ragassay.analysis.hypotheses import cluster_test as difference_interval

    clear = difference_interval([1] * 40 + [0] * 2, [0] * 40 + [1] * 2)
    assert clear.answer == "yes" and clear.ci_low > 0
    assert difference_interval([0] * 40 + [1] * 2, [1] * 40 + [0] * 2).answer == "no"
    close = difference_interval([1, 0] * 20, [1, 0] * 19 + [0, 0])  # 0.500 vs 0.475: a point estimate says yes
    assert close.difference > 0 and close.answer == "not detectable" and close.ci_low < 0 < close.ci_high
    few = difference_interval([1], [0, 1])
    assert few.answer is None and few.ci_low is None and "fewer than 2 values" in few.reason
    flat = difference_interval([1, 1, 1], [0, 0])
    assert flat.answer is None and "no variation" in flat.reason
