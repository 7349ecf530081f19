"""The umbrela relevance judge: UMBRELA's published prompt, the grade read from the reply, re-asks, never a guessed
grade, against the real OpenAI client and a scripted local server."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from ragassay import RAGOutput, Sample
from ragassay.components import ComponentContext
from ragassay.plugin_manager import get_plugin_host
from ragassay.plugins.umbrela import CORRECTION, UMBRELA_PROMPT, parse_grade

from servers.openai_chat import OpenAIChatServer, Turn, server_error

pytest.importorskip("openai")

#: sha256 of castorini/umbrela's src/umbrela/prompts/qrel_zeroshot_bing.txt (1,341 characters, commit 16cba3e).
PUBLISHED_SHA256 = "c92537a4f97293dfe1fd5f3dccc3f7dea44e3ace65061a74dbf8afc833441546"
SAMPLE = Sample(question_id="q1", question="How do honeybees tell each other where the flowers are?")
OUTPUT = RAGOutput(answer="", contexts=["The waggle dance tells direction.", "Varroa mites."], context_ids=["a", "b"])


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-umbrela")
    with OpenAIChatServer() as server:
        yield server


def judge(server, tmp_path, **options):
    generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "cache": False,
                                               "backoff_s": 0.0, "max_retries": 0}}  # fmt: skip
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    return context.build("judge", {"name": "umbrela", "options": {"generator": generator, **options}})


def test_the_prompt_is_umbrelas_published_zero_shot_bing_prompt():
    assert hashlib.sha256(UMBRELA_PROMPT.encode()).hexdigest() == PUBLISHED_SHA256


@pytest.mark.parametrize(
    "reply, grade",
    [
        ("##final score: 2", 2),
        ("M: 1, T: 3\n##Final Score: 0", 0),
        ('{"o": 3}', 3),
        (" 1. ", 1),
        ("M = 2, T = 1", None),  # two numbers, no final score: not a grade
        ("final score: 7", None),
        ("relevant", None),
    ],
)
def test_parse_grade(reply, grade):
    assert parse_grade(reply) == grade


def test_each_passage_is_graded_with_the_filled_prompt(server, tmp_path):
    server.default = lambda request: Turn(text="##final score: 3" if "waggle" in str(request.json) else "0")
    result = asyncio.run(judge(server, tmp_path).judge(SAMPLE, OUTPUT))
    assert (result.verdict, result.score, result.details["grades"]) == ("graded", 0.5, [3, 0])
    assert result.judge_id.startswith("umbrela:openai:umbrela-zeroshot-bing-1:")
    prompts = sorted(r.json["messages"][-1]["content"] for r in server.requests)
    expected = UMBRELA_PROMPT.replace("{query}", SAMPLE.question)
    assert prompts == sorted(expected.replace("{passage}", p) for p in OUTPUT.contexts)


def test_a_reply_without_a_score_is_re_asked_then_unscored_with_the_raw_reply(server, tmp_path):
    one = RAGOutput(answer="", contexts=["The waggle dance."], context_ids=["a"])
    server.script(Turn(text="Quite relevant."), Turn(text="##final score: 2"))
    j = judge(server, tmp_path)
    result = asyncio.run(j.judge(SAMPLE, one))
    assert (result.score, result.details["grade"], server.calls) == (pytest.approx(2 / 3), 2, 2)
    assert server.requests[1].json["messages"][-1]["content"] == CORRECTION
    server.default = lambda request: Turn(text="Relevant, I think.")
    result = asyncio.run(j.judge(SAMPLE, one))
    assert (result.verdict, result.score, result.details["grade"]) == ("unscored", None, None)
    assert "no final score" in result.explanation and server.calls == 5
    assert result.details["replies"][0]["raw"] == "Relevant, I think."


def test_a_failing_model_is_unscored_never_guessed(server, tmp_path):
    server.default = lambda request: server_error(500)
    result = asyncio.run(judge(server, tmp_path).judge(SAMPLE, OUTPUT))
    assert (result.verdict, result.score) == ("unscored", None)
    assert "the judge model failed" in result.explanation


def test_a_changed_prompt_changes_the_identity(server, tmp_path):
    plain = judge(server, tmp_path)
    other = judge(server, tmp_path, prompt=UMBRELA_PROMPT + "\nBe strict.")
    assert plain.identity != other.identity
