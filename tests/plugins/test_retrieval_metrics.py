"""Retrieval metrics: MRR, recall@k, precision@k over chunk and document ids, and every unscored path."""

from __future__ import annotations

import pydantic
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ragassay.models import RAGOutput, Sample, Unscored
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.retrieval_metrics import ContextMAP, ContextMRR, PrecisionAtK, RecallAtK

ALL = (ContextMRR, ContextMAP, RecallAtK, PrecisionAtK)


def sample(*ref_ids: str) -> Sample:
    return Sample(question_id="q1", question="q?", reference_context_ids=list(ref_ids))


def output(ids: list[str], doc_ids: list[str] | None = None, retrieved: bool | None = True) -> RAGOutput:
    return RAGOutput(
        answer="a",
        contexts=[f"text of {i}" for i in ids],
        context_ids=ids,
        context_document_ids=doc_ids or [],
        retrieved=retrieved,
    )


def score(metric_cls, s: Sample, o: RAGOutput, **options):
    return metric_cls(metric_cls.Options(**options)).score(s, o)


@pytest.mark.parametrize("cls", ALL)
def test_registered_through_entry_point(cls):
    info = load_plugins().registry.get("metric", cls.name)
    assert info.cls is cls
    assert info.plugin == "retrieval_metrics"


@pytest.mark.parametrize("cls", ALL)
def test_documents_formula_and_source(cls):
    assert cls.formula and cls.source
    assert "Formula" in cls.__doc__ and "Source" in cls.__doc__


# -- MRR -----------------------------------------------------------------------------------------


def test_mrr_relevant_at_rank_three():
    assert score(ContextMRR, sample("c3"), output(["c1", "c2", "c3", "c4"])) == pytest.approx(1 / 3)


def test_mrr_uses_first_relevant_only():
    assert score(ContextMRR, sample("c2", "c4"), output(["c1", "c2", "c3", "c4"])) == 0.5


def test_mrr_none_relevant_is_zero():
    assert score(ContextMRR, sample("zz"), output(["c1", "c2"])) == 0.0


def test_mrr_matches_document_ids():
    o = output(["d1#0", "d2#0", "d2#1"], ["d1", "d2", "d2"])
    assert score(ContextMRR, sample("d2"), o) == 0.5


def test_mrr_cutoff_k():
    o = output(["c1", "c2", "c3"])
    assert score(ContextMRR, sample("c3"), o, k=2) == 0.0
    assert score(ContextMRR, sample("c3"), o, k=3) == pytest.approx(1 / 3)


def test_mrr_empty_retrieval_scores_zero():
    assert score(ContextMRR, sample("c1"), output([], retrieved=True)) == 0.0
    assert score(ContextMRR, sample("c1"), output([], retrieved=None)) == 0.0


# -- recall@k ------------------------------------------------------------------------------------


def test_recall_at_k_cutoff_removes_a_hit():
    o = output(["c1", "x", "y", "c2"])
    assert score(RecallAtK, sample("c1", "c2"), o, k=4) == 1.0
    assert score(RecallAtK, sample("c1", "c2"), o, k=3) == 0.5
    assert score(RecallAtK, sample("c1", "c2"), o, k=None) == 1.0


def test_recall_default_k_is_five():
    o = output(["a", "b", "c", "d", "e", "c1"])
    assert RecallAtK.Options().k == 5
    assert score(RecallAtK, sample("c1"), o) == 0.0


def test_recall_counts_distinct_references():
    # two chunks of the same reference document count once; duplicates in the references count once
    o = output(["d1#0", "d1#1"], ["d1", "d1"])
    assert score(RecallAtK, sample("d1", "d1", "d9"), o) == 0.5


def test_recall_mixes_chunk_and_document_ids():
    o = output(["d1#0", "d2#3"], ["d1", "d2"])
    assert score(RecallAtK, sample("d1", "d2#3", "d3"), o) == pytest.approx(2 / 3)


# -- precision@k ---------------------------------------------------------------------------------


def test_precision_at_k_divides_by_k():
    o = output(["c1", "x", "c2"])
    assert score(PrecisionAtK, sample("c1", "c2"), o, k=2) == 0.5
    assert score(PrecisionAtK, sample("c1", "c2"), o, k=5) == pytest.approx(2 / 5)  # fewer than k retrieved


def test_precision_k_none_divides_by_retrieved():
    o = output(["c1", "x", "c2"])
    assert score(PrecisionAtK, sample("c1", "c2"), o, k=None) == pytest.approx(2 / 3)
    assert score(PrecisionAtK, sample("c1"), output([]), k=None) == 0.0


def test_precision_counts_every_relevant_chunk_of_a_document():
    o = output(["d1#0", "d1#1", "d2#0"], ["d1", "d1", "d2"])
    assert score(PrecisionAtK, sample("d1"), o, k=3) == pytest.approx(2 / 3)


# -- options and unscored paths ------------------------------------------------------------------


@pytest.mark.parametrize("cls", ALL)
def test_k_must_be_positive(cls):
    with pytest.raises(pydantic.ValidationError):
        cls.Options(k=0)
    with pytest.raises(pydantic.ValidationError):
        cls.Options(top=3)


@pytest.mark.parametrize("cls", ALL)
def test_unscored_without_reference_ids(cls):
    result = score(cls, sample(), output(["c1"]))
    assert isinstance(result, Unscored)
    assert result.reason == "sample has no reference_context_ids"


@pytest.mark.parametrize("cls", ALL)
def test_unscored_when_system_did_not_retrieve(cls):
    result = score(cls, sample("c1"), output([], retrieved=False))
    assert isinstance(result, Unscored)
    assert "did not retrieve" in result.reason


@pytest.mark.parametrize("cls", ALL)
def test_unscored_when_contexts_have_no_ids(cls):
    o = RAGOutput(answer="a", contexts=["some text"], retrieved=True)
    result = score(cls, sample("c1"), o)
    assert isinstance(result, Unscored)
    assert "no context_ids" in result.reason


@pytest.mark.parametrize("cls", ALL)
def test_empty_retrieval_scores_zero(cls):
    assert score(cls, sample("c1"), output([])) == 0.0


@pytest.mark.parametrize("cls", ALL)
def test_k_all_can_be_written_in_toml_and_means_every_retrieved_context(cls):
    options = cls.Options.model_validate(tomllib.loads('k = "all"'))
    assert options.k is None
    ids = ["a", "b", "c", "d", "e", "f", "g"]  # the reference is 7th: beyond the default cut-off of 5
    assert cls(options).score(sample("g"), output(ids)) > 0
    with pytest.raises(pydantic.ValidationError):
        cls.Options(k="every")


# -- context_map (Unitxt MAP) and the unitxt compatibility mode ------------------------------------------------


def test_map_published_cases():
    assert score(ContextMAP, sample("A", "C"), output(["A", "B", "C"])) == pytest.approx(5 / 6)
    assert score(ContextMAP, sample("B"), output(["A", "B"])) == 0.5


def test_map_divides_by_relevant_retrieved_unlike_trec_eval():
    assert score(ContextMAP, sample("A", "B"), output(["A", "X"])) == 1.0


def test_map_matches_document_ids_and_cutoff():
    assert score(ContextMAP, sample("doc"), output(["c1", "c2"], ["x", "doc"])) == 0.5
    assert score(ContextMAP, sample("B"), output(["A", "B"]), k=1) == 0.0


@pytest.mark.parametrize("cls", (ContextMRR, ContextMAP))
def test_unitxt_mode_scores_zero_where_ragassay_mode_is_unscored(cls):
    no_refs = score(cls, sample(), output(["A"]))
    assert isinstance(no_refs, Unscored)
    assert score(cls, sample(), output(["A"]), compat="unitxt") == 0.0
    not_retrieved = output([], retrieved=False)
    assert isinstance(score(cls, sample("A"), not_retrieved), Unscored)
    assert score(cls, sample("A"), not_retrieved, compat="unitxt") == 0.0


@pytest.mark.parametrize("cls", (ContextMRR, ContextMAP))
def test_unitxt_mode_matches_context_ids_only(cls):
    by_document = output(["c1"], ["doc"])
    assert score(cls, sample("doc"), by_document) == 1.0
    assert score(cls, sample("doc"), by_document, compat="unitxt") == 0.0


def test_compat_rejects_unknown_mode():
    with pytest.raises(pydantic.ValidationError):
        ContextMAP.Options(compat="trec")
