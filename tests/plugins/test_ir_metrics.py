"""IR metrics: every value trec_eval prints on its own test collection, hand-made cases, and the per-sample metrics."""

from __future__ import annotations

import math
from pathlib import Path

import pydantic
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ragassay.models import RAGOutput, Sample, Unscored
from ragassay.plugin_manager import load_plugins
from ragassay.plugins import ir_metrics as ir

TREC = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "trec_eval_test"
REQUIRED = {
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "recip_rank",
    "ndcg",
    *(f"{m}_{k}" for m in ("P", "recall", "ndcg_cut", "map_cut") for k in ir.CUTOFFS),
    *(f"success_{k}" for k in ir.SUCCESS_CUTOFFS),
}


def trec_output(name: str) -> dict[str, dict[str, str]]:
    values: dict[str, dict[str, str]] = {}
    for line in (TREC / name).read_text().splitlines():
        measure, qid, value = line.split()
        values.setdefault(qid, {})[measure] = value
    return values


@pytest.mark.parametrize(
    "qrels, expected, level",
    [
        ("qrels.test", "out.test.a", 1),  # summary of all measures
        ("qrels.test", "out.test.aq", 1),  # per query
        ("qrels.rel_level", "out.test.aql", 2),  # graded qrels, trec_eval -l 2
    ],
)
def test_every_value_trec_eval_prints_on_its_test_collection(qrels, expected, level):
    if not (TREC / "results.test").is_file():
        pytest.skip(f"trec_eval's test collection is not at {TREC} (a checkout without ../shared/data)")
    per_query, summary = ir.evaluate(
        ir.read_qrels(TREC / qrels), ir.read_run(TREC / "results.test"), relevance_level=level
    )
    checked = set()
    for qid, values in trec_output(expected).items():
        ours = summary if qid == "all" else per_query[qid]
        for measure, printed in values.items():
            if measure not in ours:
                continue
            value = ours[measure]
            assert (f"{value:.4f}" if "." in printed else str(int(value))) == printed, (qid, measure)
            checked.add(measure)
    assert checked >= REQUIRED - ({"num_q", "gm_map"} if expected.endswith(("aq", "aql")) else set())


def test_ties_are_broken_by_document_id_descending():
    assert ir.trec_order([("a", 1.0), ("c", 2.0), ("b", 1.0), ("d", 1.0)]) == ["c", "d", "b", "a"]
    with pytest.raises(ValueError, match="duplicate document 'a'"):
        ir.trec_order([("a", 1.0), ("a", 0.5)])
    # the order decides the measure: relevant "a" ties with "b" and loses
    _, summary = ir.evaluate({"q": {"a": 1}}, {"q": [("a", 0.5), ("b", 0.5)]})
    assert summary["recip_rank"] == 0.5


def test_average_precision_divides_by_every_relevant_document():
    q = ir.Judged.of(["r1", "n", "r2", "n2"], {"r1": 1, "r2": 1, "r3": 1, "r4": 1})
    assert ir.average_precision(q) == pytest.approx((1 / 1 + 2 / 3) / 4)
    assert ir.average_precision(q, over_hits=True) == pytest.approx((1 / 1 + 2 / 3) / 2)  # Unitxt MAP
    assert ir.average_precision(q, k=2) == pytest.approx(1 / 4)  # map_cut_2
    assert ir.r_precision(q) == pytest.approx(2 / 4)
    assert ir.recall(q, 3) == pytest.approx(2 / 4) and ir.success(q, 1) == 1.0
    assert ir.precision(q, 10) == pytest.approx(0.2)  # divisor k even past the list (trec_eval)
    assert ir.precision(q, 10, capped=True) == pytest.approx(0.5)  # Unitxt caps at the list length


def test_graded_ndcg_by_hand_and_unjudged_documents():
    q = ir.Judged.of(["b", "x", "a", "u"], {"a": 3, "b": 1, "c": 2, "n": 0, "u": -1})
    dcg = 1 / math.log2(2) + 3 / math.log2(4)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ir.ndcg(q) == pytest.approx(dcg / ideal)
    assert ir.ndcg(q, 2) == pytest.approx((1 / 1) / (3 + 2 / math.log2(3)))
    assert q.grades == (1, -1, 3, -1) and q.num_rel == 3  # 'x' not judged, 'u' in the pool but unjudged
    level2 = ir.Judged.of(["b", "x", "a"], {"a": 3, "b": 1, "c": 2}, level=2)
    assert level2.num_rel == 2 and ir.reciprocal_rank(level2) == pytest.approx(1 / 3)
    assert ir.ndcg(level2) == pytest.approx(ir.ndcg(ir.Judged.of(["b", "x", "a"], {"a": 3, "b": 1, "c": 2})))


def test_queries_missing_from_the_run_count_only_with_complete():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": [("a", 1.0)], "q9": [("z", 1.0)]}  # q9 has no qrels: ignored
    per_query, summary = ir.evaluate(qrels, run)
    assert set(per_query) == {"q1"} and summary["num_q"] == 1 and summary["map"] == 1.0
    _, complete = ir.evaluate(qrels, run, complete=True)  # trec_eval -c
    assert complete["num_q"] == 2 and complete["map"] == 0.5 and complete["num_rel"] == 2
    assert complete["gm_map"] == pytest.approx(math.sqrt(1.0 * ir.MIN_GEO_MEAN))
    assert ir.evaluate({}, {})[1] == {"num_q": 0}


def test_reading_trec_files(tmp_path):
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n\n2 0 d3 2\n")
    (tmp_path / "run").write_text("1 Q0 d2 1 0.9 tag\n1 Q0 d1 2 0.4 tag\n")
    assert ir.read_qrels(tmp_path / "qrels") == {"1": {"d1": 1, "d2": 0}, "2": {"d3": 2}}
    assert ir.read_run(tmp_path / "run") == {"1": [("d2", 0.9), ("d1", 0.4)]}
    (tmp_path / "bad").write_text("1 d1 1\n")
    with pytest.raises(ValueError, match="bad:1: a qrels line has 4 fields"):
        ir.read_qrels(tmp_path / "bad")


# -- per-sample metrics -----------------------------------------------------------------------


def metric(name: str, **options):
    info = load_plugins().registry.get("metric", name)
    return info.cls(info.cls.Options(**options))


def output(ids, docs=None, **fields) -> RAGOutput:
    return RAGOutput(
        answer="", context_ids=ids, context_document_ids=docs or [], contexts=["t"] * len(ids), retrieved=True, **fields
    )


SAMPLE = Sample(question_id="q", question="?", reference_context_ids=["doc2", "doc5"])
CHUNKS = output(["doc1#0", "doc2#0", "doc2#1", "doc3#0", "doc5#0"], ["doc1", "doc2", "doc2", "doc3", "doc5"])


def test_metrics_are_registered_with_formula_and_source():
    names = ["ir_mrr", "ir_map", "ndcg_at_k", "ir_precision_at_k", "ir_recall_at_k", "hit_at_k", "r_precision"]
    for name in names:
        info = load_plugins().registry.get("metric", name)
        assert info.plugin == "ir_metrics" and info.cls.formula and info.cls.source


def test_document_level_ranking_deduplicates_documents():
    # documents ranked doc1, doc2, doc3, doc5: relevant at ranks 2 and 4
    assert metric("ir_mrr").score(SAMPLE, CHUNKS) == 0.5
    assert metric("ir_map").score(SAMPLE, CHUNKS) == pytest.approx((1 / 2 + 2 / 4) / 2)
    assert metric("ir_precision_at_k", k=2).score(SAMPLE, CHUNKS) == 0.5
    assert metric("ir_recall_at_k", k=3).score(SAMPLE, CHUNKS) == 0.5
    assert metric("hit_at_k", k=1).score(SAMPLE, CHUNKS) == 0.0 and metric("hit_at_k", k=2).score(SAMPLE, CHUNKS) == 1
    assert metric("r_precision").score(SAMPLE, CHUNKS) == 0.5
    ideal = 1 + 1 / math.log2(3)
    assert metric("ndcg_at_k").score(SAMPLE, CHUNKS) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)


def test_chunk_level_and_auto_detection():
    sample = Sample(question_id="q", question="?", reference_context_ids=["doc2#1"])
    assert metric("ir_mrr").score(sample, CHUNKS) == pytest.approx(1 / 3)  # auto: a reference is a chunk id
    assert metric("ir_mrr", level="document").score(SAMPLE, CHUNKS) == 0.5
    assert metric("ir_mrr", level="chunk").score(SAMPLE, CHUNKS) == 0.0  # chunk ids never equal document ids


def test_unitxt_variants():
    sample = Sample(question_id="q", question="?", reference_context_ids=["a", "b", "c"])
    out = output(["x", "a"])
    assert metric("ir_map").score(sample, out) == pytest.approx((1 / 2) / 3)
    assert metric("ir_map", variant="unitxt").score(sample, out) == pytest.approx(1 / 2)
    assert metric("ir_precision_at_k", k=5).score(sample, out) == pytest.approx(1 / 5)
    assert metric("ir_precision_at_k", k=5, variant="unitxt").score(sample, out) == pytest.approx(1 / 2)


def test_graded_relevance_from_metadata():
    graded = {"relevance": {"a": 1, "b": 3}}
    sample = Sample(question_id="q", question="?", reference_context_ids=["a"], metadata=graded)
    out = output(["a", "b"])
    assert metric("ndcg_at_k").score(sample, out) == pytest.approx((1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3)))
    assert metric("ir_mrr", relevance_level=2).score(sample, out) == 0.5


def test_scores_in_the_trace_reorder_ties_as_trec_eval_does():
    sample = Sample(question_id="q", question="?", reference_context_ids=["a"])
    out = output(["a", "b"], trace={"scores": [0.7, 0.7]})  # tie: trec_eval ranks 'b' first
    assert metric("ir_mrr").score(sample, out) == 0.5
    assert metric("ir_mrr", order="ranks").score(sample, out) == 1.0


def test_a_judged_ranking_is_reused_only_for_the_same_ids_scores_judgements_and_options():
    sample = Sample(question_id="q", question="?", reference_context_ids=["a"])
    tie, ahead = output(["a", "b"], trace={"scores": [0.7, 0.7]}), output(["a", "b"], trace={"scores": [0.9, 0.7]})
    assert ir.judged(tie, {"a": 1.0}, metric("ir_mrr").options) is ir.judged(
        tie, {"a": 1.0}, metric("hit_at_k").options
    )
    assert [metric("ir_mrr").score(sample, out) for out in (tie, ahead, tie)] == [0.5, 1.0, 0.5]
    assert metric("ir_mrr", order="ranks").score(sample, tie) == 1.0
    graded = Sample(question_id="q", question="?", reference_context_ids=["a"], metadata={"relevance": {"b": 2}})
    assert metric("ir_mrr", relevance_level=2).score(graded, tie) == 1.0  # 'b' ranks first in the tie
    assert metric("ir_mrr", relevance_level=2).score(sample, tie) == 0.0
    unhashable = output(["a", "b"], trace={"scores": [[0.1], [0.9]]})  # not numbers: the output's order is kept
    assert metric("ir_mrr").score(sample, unhashable) == 1.0


def test_unscored_and_empty_retrieval():
    empty = Sample(question_id="q", question="?")
    assert isinstance(metric("ir_map").score(empty, CHUNKS), Unscored)
    skipped = RAGOutput(answer="", retrieved=False)
    assert metric("ir_map").score(SAMPLE, skipped).reason == "system did not retrieve (retrieved=False)"
    no_ids = RAGOutput(answer="", contexts=["text"])
    assert isinstance(metric("ndcg_at_k").score(SAMPLE, no_ids), Unscored)
    chunk_ids_only = output(["doc2#0"])
    assert "no context_document_ids" in metric("ir_map", level="document").score(SAMPLE, chunk_ids_only).reason
    bad_grades = Sample(question_id="q", question="?", reference_context_ids=["a"], metadata={"relevance": ["a"]})
    assert "numeric grades" in metric("ir_map").score(bad_grades, CHUNKS).reason
    nothing = RAGOutput(answer="", retrieved=True)  # retrieved nothing: 0.0, as trec_eval -c
    assert all(metric(name).score(SAMPLE, nothing) == 0.0 for name in ("ir_mrr", "ir_map", "ndcg_at_k", "r_precision"))


def test_per_sample_mean_equals_trec_eval_on_the_same_run():
    samples = [
        Sample(question_id=f"q{i}", question="?", reference_context_ids=refs)
        for i, refs in enumerate([["a", "c"], ["b"], ["x", "y", "z"]])
    ]
    outputs = [output(["a", "b", "c"]), output(["c", "a", "b"]), output(["y", "q", "r", "z"])]
    qrels = {s.question_id: {r: 1 for r in s.reference_context_ids} for s in samples}
    run = {s.question_id: [(d, -r) for r, d in enumerate(o.context_ids)] for s, o in zip(samples, outputs)}
    _, summary = ir.evaluate(qrels, run)
    for name, measure, options in [
        ("ir_map", "map", {}),
        ("ir_mrr", "recip_rank", {}),
        ("r_precision", "Rprec", {}),
        ("ndcg_at_k", "ndcg_cut_5", {"k": 5}),
        ("ir_precision_at_k", "P_5", {}),
        ("ir_recall_at_k", "recall_5", {}),
        ("ndcg_at_k", "ndcg", {"k": None}),
    ]:
        mean = sum(metric(name, **options).score(s, o) for s, o in zip(samples, outputs)) / len(samples)
        assert mean == pytest.approx(summary[measure]), name


@pytest.mark.parametrize("name", ["ir_mrr", "ir_map", "ndcg_at_k", "ir_precision_at_k", "ir_recall_at_k", "hit_at_k"])
def test_k_all_can_be_written_in_toml_and_means_the_whole_ranking(name):
    cls = load_plugins().registry.get("metric", name).cls
    options = cls.Options.model_validate(tomllib.loads('k = "all"'))
    assert options.k is None
    sample = Sample(question_id="q", question="?", reference_context_ids=["g"])
    out = output(["a", "b", "c", "d", "e", "f", "g"])  # the relevant id is 7th: beyond every default cut-off
    assert cls(options).score(sample, out) > 0
    with pytest.raises(pydantic.ValidationError):
        cls.Options(k="some")


def test_precision_at_k_all_divides_by_the_number_retrieved():
    sample = Sample(question_id="q", question="?", reference_context_ids=["b", "d"])
    assert metric("ir_precision_at_k", k="all").score(sample, output(["a", "b", "c", "d"])) == 0.5
