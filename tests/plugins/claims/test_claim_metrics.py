"""The claim metrics as components: replayed checks need no model call, only the check lists the configured
metrics read are asked for, a missing reference answer unscores only what needs it, the offline twins are
labelled offline and work without a model."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext
from ragassay.models import MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.claims.specs import SPECS

from claims_llm import ReferenceJudge, judge_server, results

pytest.importorskip("openai")

NAMES = [spec.name for spec in SPECS]


def build(tmp_path, names, url=None, **options):
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "c")
    if url is not None:
        generator = {"name": "openai", "options": {"model": "judge", "base_url": url + "/v1", "backoff_s": 0.0}}
        options = {"generator": generator, **options}
    return [context.build("metric", {"name": name, "options": options}) for name in names]


def sample_and_output(r, reference=True, trace=None):
    sample = Sample(
        question_id=r["query_id"], question=r["query"], reference_answers=[r["gt_answer"]] if reference else []
    )
    chunks = r["retrieved_context"]
    output = RAGOutput(
        answer=r["response"],
        contexts=[c["text"] for c in chunks],
        context_ids=[c["doc_id"] for c in chunks],
        trace=trace or {},
    )
    return sample, output


def score(metrics, sample, output):
    async def all_of_them():
        return [await m.ascore(sample, output) for m in metrics]

    return asyncio.run(all_of_them())


def stored(r):
    keys = ("response_claims", "gt_answer_claims", "answer2response", "response2answer")
    checks = {k: r[k] for k in keys + ("retrieved2response", "retrieved2answer")}
    return {**checks, "chunk_ids": [c["doc_id"] for c in r["retrieved_context"]]}


@pytest.mark.parametrize("suffix", ["", "_offline"])
def test_checks_in_the_trace_are_replayed_without_a_model_call(tmp_path, monkeypatch, suffix):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with judge_server(ReferenceJudge()) as server:
        metrics = build(tmp_path, [f"rc_{n}{suffix}" for n in NAMES], server.url if not suffix else None)
        for r in results():
            values = score(metrics, *sample_and_output(r, trace={"ragchecker": stored(r)}))
            assert [v.value for v in values] == pytest.approx([r["metrics"][n] for n in NAMES], abs=1e-12)
            assert values[0].details["calls"] == 0 and "replayed" in values[0].details["explanations"]["source"]
        assert server.calls == 0


def test_only_the_check_lists_the_configured_metrics_read_are_asked_for(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with judge_server(ReferenceJudge()) as server:
        (claim_recall,) = build(tmp_path, ["rc_claim_recall"], server.url, claims_per_call=5)
        r = results()[0]
        value = score([claim_recall], *sample_and_output(r))[0]
        assert value.value == pytest.approx(r["metrics"]["claim_recall"])
        c_g, k = len(r["gt_answer_claims"]), len(r["retrieved_context"])
        assert server.calls == value.details["calls"] == 1 + k * -(-c_g // 5)  # no response claim extracted
        assert value.details["checks"]["response_claims"] == [] and value.details["checks"]["answer2response"] is None
        assert value.details["missing"]["answer2response"] == "not asked for"


def test_without_a_reference_answer_only_what_needs_it_is_unscored(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with judge_server(ReferenceJudge()) as server:
        metrics = build(tmp_path, ["rc_precision", "rc_faithfulness", "rc_claim_recall"], server.url)
        r = results()[1]
        precision, faithfulness, claim_recall = score(metrics, *sample_and_output(r, reference=False))
        assert isinstance(precision, Unscored)
        assert precision.reason == "answer2response: the sample has no reference_answers"
        assert isinstance(claim_recall, Unscored) and "no reference_answers" in claim_recall.reason
        assert isinstance(faithfulness, MetricResult)
        assert faithfulness.value == pytest.approx(r["metrics"]["faithfulness"])


def test_offline_twins_are_labelled_and_need_no_model(tmp_path):
    metrics = build(tmp_path, ["rc_precision_offline", "rc_hallucination_offline"])
    assert all(m.name.endswith("_offline") and "offline, weak" in m.description() for m in metrics)
    sample = Sample(question_id="q", question="Where is the bridge?", reference_answers=["The bridge is in Zurich."])
    output = RAGOutput(answer="The bridge is in Zurich. It opened in 1850.", contexts=["A bridge opened in 1850."])
    precision, hallucination = score(metrics, sample, output)
    assert precision.details["checks"]["response_claims"] == ["The bridge is in Zurich.", "It opened in 1850."]
    assert precision.details["checks"]["answer2response"] == ["Entailment", "Neutral"]
    assert precision.value == 0.5 and precision.details["calls"] == 0 and "weak" in precision.details["offline"]
    assert hallucination.value == 0.0  # the second claim is in the chunk: not hallucinated (self-knowledge 0.5)
