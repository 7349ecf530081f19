"""GRAMMAR's Correct/Incorrect judge (Table 6 "Ours") on the judge base: structured (explanation first) and free
text (the paper's protocol, as grammar_llm), against the real OpenAI client and a scripted local server."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragassay import RAGOutput, Sample
from ragassay.components import ComponentContext
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.grammar.judge import GrammarLLMJudge
from ragassay.plugins.judges.correctness import JUDGE_PROMPT, CorrectnessJudge

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

SAMPLE = Sample(question_id="q", question="Where is Aurp based?", reference_answers=["Zürich", "ZH"])
OUTPUT = RAGOutput(answer="In Zürich.")


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-correctness")
    with OpenAIChatServer() as server:
        yield server


def judge(server, tmp_path, name="correctness", **options):
    generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "cache": False}}
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    return context.build("judge", {"name": name, "options": {"generator": generator, **options}})


def run(j, sample=SAMPLE):
    return asyncio.run(j.judge(sample, OUTPUT))


@pytest.mark.parametrize("said, verdict, score", [("Correct", "correct", 1.0), ("**INCORRECT**", "incorrect", 0.0)])
def test_structured_verdicts_explanation_first(server, tmp_path, said, verdict, score):
    server.script(Turn(text=json.dumps({"explanation": "Same city.", "judgement": said})))
    result = run(judge(server, tmp_path))
    assert (result.verdict, result.score, result.explanation) == (verdict, score, "Same city.")
    assert result.judge_id.startswith("correctness:openai:grammar-table6-1:")
    request = server.requests[0].json
    assert list(request["response_format"]["json_schema"]["schema"]["properties"]) == ["explanation", "judgement"]
    expected = JUDGE_PROMPT.replace("{query}", SAMPLE.question).replace("{true_answer}", "Zürich | ZH")
    assert request["messages"][-1]["content"] == expected.replace("{given_response}", "In Zürich.")


def test_structured_not_correct_is_re_asked_then_unscored_with_raw(server, tmp_path):
    server.script(Turn(text='{"explanation": "x", "judgement": "not correct"}'))
    server.script(Turn(text='{"explanation": "Wrong city.", "judgement": "Incorrect"}'))
    j = judge(server, tmp_path)
    assert run(j).verdict == "incorrect" and server.calls == 2
    server.default = lambda r: Turn(text="Correct-ish")
    result = run(j)
    assert (result.verdict, result.score) == ("unscored", None)
    assert result.details["raw"] == "Correct-ish" and result.explanation.startswith("unparseable judge reply")
    assert server.calls == 5


def test_text_reply_first_whole_word_decides_with_re_asks(server, tmp_path):
    server.script(Turn(text="The response is incorrectly phrased"), Turn(text="Incorrect. The correct answer is ZH."))
    j = judge(server, tmp_path, reply="text")
    result = run(j)
    assert (result.verdict, result.score) == ("incorrect", 0.0) and server.calls == 2
    assert "Answer with one of: correct, incorrect" in server.requests[1].json["messages"][-1]["content"]
    assert "response_format" not in server.requests[0].json
    server.default = lambda r: Turn(text="Uncorrectable.")
    unscored = run(j)
    assert unscored.verdict == "unscored" and unscored.details["raw"] == "Uncorrectable." and server.calls == 5


def test_grammar_llm_is_the_same_judge_with_free_text_by_default(server, tmp_path):
    server.script(Turn(text="Correct"))
    j = judge(server, tmp_path, name="grammar_llm")
    assert isinstance(j, CorrectnessJudge) and isinstance(j, GrammarLLMJudge) and j.options.reply == "text"
    assert run(j).verdict == "correct" and j.judge_id.startswith("grammar_llm:openai:grammar-table6-1:")
    assert judge(server, tmp_path).options.reply == "structured"
    custom = judge(server, tmp_path, prompt=JUDGE_PROMPT + " ")
    assert custom.judge_id != judge(server, tmp_path).judge_id  # the prompt is part of the identity


def test_no_reference_answer_is_unscored_without_a_call(server, tmp_path):
    result = run(judge(server, tmp_path), Sample(question_id="x", question="?"))
    assert result.verdict == "unscored" and "no reference answer" in result.explanation and server.calls == 0
