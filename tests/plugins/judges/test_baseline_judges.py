"""ragas_fact and selfcheck_qa against a scripted OpenAI-compatible server driven by the real client."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from ragassay.components import ComponentContext
from ragassay.models import Judgement, MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugin_manager import get_plugin_host

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

SAMPLE = Sample(question_id="q", question="Who leads project Apollo?")
OUTPUT = RAGOutput(answer="Ada Lovelace leads Apollo. It started in 2021.", contexts=["Apollo is led by Ada Lovelace."])


def _user(request) -> str:
    return request.json["messages"][0]["content"]  # re-asks append the correction after it


def _json(**fields) -> Turn:
    return Turn(text=json.dumps(fields))


def _build(tmp_path, server, kind, name, **options):
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    generator = {"name": "openai", "options": {"model": "gpt-4o-mini", "base_url": server.url + "/v1"}}
    return context.build(kind, {"name": name, "options": {"generator": generator, **options}})


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-baselines")
    with OpenAIChatServer() as server:
        yield server


def _ragas_replies(statements, verdicts):
    def reply(request):
        text = _user(request)
        if text.startswith("Given a question and answer, create one or more statements"):
            return _json(statements=statements)
        statement = text.split("statement: ")[1].split("\nverdict:")[0]
        verdict = verdicts[statement]
        return Turn(text=verdict) if verdict == "garbled" else _json(explanation=f"about {statement}", verdict=verdict)

    return reply


def test_ragas_fact_is_the_share_of_supported_statements(tmp_path, server):
    statements = ["Ada Lovelace leads Apollo.", "Apollo started in 2021.", "Apollo is a project."]
    server.default = _ragas_replies(statements, dict(zip(statements, ["Yes", "No", "Null"])))
    metric = _build(tmp_path, server, "metric", "ragas_fact")
    result = asyncio.run(metric.ascore(SAMPLE, OUTPUT))
    assert isinstance(result, MetricResult) and result.value == pytest.approx(1 / 3)
    assert [row["verdict"] for row in result.details["statements"]] == ["yes", "no", "null"]
    assert result.details["statements"][1]["explanation"] == "about Apollo started in 2021."
    assert server.calls == 4  # one decomposition + one verdict per statement
    first, nli = _user(server.requests[0]), _user(server.requests[1])
    assert "question: Who leads project Apollo?\nanswer: Ada Lovelace leads Apollo." in first
    assert nli.startswith("Natural language inference. Use only 'Yes' (1), 'No' (0) and 'Null' (-1) as verdict.")
    assert "context: Apollo is led by Ada Lovelace." in nli
    assert server.requests[1].json["response_format"]["type"] == "json_schema"
    assert result.details["judge"] == metric.identity and metric.identity.startswith(
        "ragas_fact:openai:grammar-table6-1:"
    )
    assert {r.json["temperature"] for r in server.requests} == {0.0}  # the judge base's greedy params


def test_ragas_fact_unscored_branches(tmp_path, server):
    metric = _build(tmp_path, server, "metric", "ragas_fact")
    no_context = asyncio.run(metric.ascore(SAMPLE, RAGOutput(answer="x", contexts=[" "])))
    assert no_context == Unscored(reason="no retrieved contexts to check the statements against")
    assert server.calls == 0

    server.default = _ragas_replies([], {})
    none = asyncio.run(metric.ascore(SAMPLE, OUTPUT))
    assert isinstance(none, Unscored) and none.reason == "the answer yields no statements"

    statements = ["Apollo exists.", "Apollo is big."]
    server.reset().default = _ragas_replies(statements, {"Apollo exists.": "Yes", "Apollo is big.": "garbled"})
    garbled = asyncio.run(metric.ascore(SAMPLE, RAGOutput(answer="Apollo exists, big.", contexts=["Apollo."])))
    assert isinstance(garbled, Unscored) and garbled.reason.startswith("NLI reply not usable for statement 2 of 2")
    assert garbled.details["statements"][1]["raw"] == "garbled"
    assert garbled.details["statements"][0]["verdict"] == "yes"
    assert server.calls == 1 + 1 + 3  # decomposition, the good verdict, the bad one asked 3 times (2 re-asks)

    server.reset().default = lambda request: Turn(text="no JSON here")
    broken = asyncio.run(metric.ascore(SAMPLE, RAGOutput(answer="Different.", contexts=["Apollo."])))
    assert isinstance(broken, Unscored) and broken.reason.startswith("statement extraction reply not usable")
    assert broken.details["raw"] == "no JSON here" and broken.details["judge"] == metric.identity


def _selfcheck_replies(disagree_with: set[int] = frozenset(), garble: bool = False):
    counter = itertools.count(1)

    def reply(request):
        if request.json.get("temperature") == 1.0:
            return Turn(text=f"Stochastic answer {next(counter)}: Ada Lovelace.")
        text = _user(request)
        assert text.startswith("Query: Who leads project Apollo?\nAnswer A: Ada Lovelace leads Apollo.")
        if garble:
            return Turn(text="Yes")
        number = int(text.split("Answer B: Stochastic answer ")[1].split(":")[0])
        return _json(explanation=f"sample {number}", verdict="No" if number in disagree_with else "Yes")

    return reply


def test_selfcheck_qa_correct_only_when_all_four_samples_agree(tmp_path, server):
    server.default = _selfcheck_replies()
    judge = _build(tmp_path, server, "judge", "selfcheck_qa")
    verdict = asyncio.run(judge.judge(SAMPLE, OUTPUT))
    assert isinstance(verdict, Judgement)
    assert (verdict.verdict, verdict.score) == ("correct", 1.0)
    assert verdict.explanation == "4 of 4 stochastic answers agree with the answer"
    assert verdict.judge_id == judge.identity and judge.identity.startswith("selfcheck_qa:openai:grammar-table6-1:")
    sampled = [r for r in server.requests if r.json.get("temperature") == 1.0]
    assert len(sampled) == 4 and server.calls == 8  # four real, distinct samples, then four comparisons
    assert len({json.dumps(r.json, sort_keys=True) for r in sampled}) == 1  # identical requests: only sample_index
    comparisons = [r for r in server.requests if r.json.get("temperature") == 0.0]
    assert len(comparisons) == 4 and "Do both answers address the query with equivalent meaning?" in _user(
        comparisons[0]
    )

    server.reset().default = _selfcheck_replies(disagree_with={3})
    judge = _build(tmp_path / "other", server, "judge", "selfcheck_qa")
    verdict = asyncio.run(judge.judge(SAMPLE, OUTPUT))
    assert (verdict.verdict, verdict.score) == ("incorrect", 0.0)
    fewer = _build(tmp_path / "fewer", server, "judge", "selfcheck_qa", samples=3)
    assert fewer.identity != judge.identity  # what shapes the procedure is part of the identity
    # the samples run concurrently, so which one the server numbered 3 varies: exactly one disagrees
    assert sorted(row["agrees"] for row in verdict.details["samples"]) == [False, True, True, True]


def test_selfcheck_qa_unusable_comparison_is_unscored(tmp_path, server):
    server.default = _selfcheck_replies(garble=True)
    judge = _build(tmp_path, server, "judge", "selfcheck_qa", samples=2)
    verdict = asyncio.run(judge.judge(SAMPLE, OUTPUT))
    assert (verdict.verdict, verdict.score) == ("unscored", None)
    assert verdict.explanation.startswith("comparison with sample 1 not usable")
    assert verdict.details["samples"][0]["raw"] == "Yes"
