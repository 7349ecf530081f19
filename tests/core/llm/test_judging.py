"""ask_structured: explanation-first verdicts from any generator, bounded re-asks, the raw reply kept when no
usable reply came; find_verdict: whole words only. The LLM side is a local server speaking the OpenAI protocol."""

from __future__ import annotations

import asyncio
import json

import pytest
from pydantic import BaseModel, Field

from ragassay import Generation, Generator
from ragassay.components import ComponentContext
from ragassay.errors import ProviderError
from ragassay.llm import ask_structured, find_verdict
from ragassay.plugin_manager import get_plugin_host

from servers.openai_chat import OpenAIChatServer, Turn, server_error

pytest.importorskip("openai")


class Verdict(BaseModel):
    explanation: str = Field(description="Why.")
    correct: bool = Field(description="The verdict.")


MESSAGES = [{"role": "user", "content": "Is the sky green?"}]


def _generator(tmp_path, server, **options):
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")
    opts = {"model": "gpt-4o-mini", "base_url": server.url + "/v1", "backoff_s": 0.01, **options}
    return context.build("generator", {"name": "openai", "options": opts})


def test_structured_reply_from_an_llm_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer() as server:
        server.default = lambda r: Turn(text=json.dumps({"explanation": "It is blue.", "correct": False}))
        reply = asyncio.run(ask_structured(_generator(tmp_path, server), MESSAGES, Verdict))
        assert reply.parsed == Verdict(explanation="It is blue.", correct=False) and reply.error is None
        assert server.requests[0].json["response_format"]["type"] == "json_schema"


def test_unusable_replies_are_reasked_then_returned_raw(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer() as server:
        server.default = lambda r: Turn(text="I think it is correct")
        reply = asyncio.run(ask_structured(_generator(tmp_path, server), MESSAGES, Verdict))
        assert reply.parsed is None and reply.raw == "I think it is correct" and "gave up after 3" in reply.error
        assert server.calls == 3  # first reply + 2 corrective re-asks, then no guess


def test_fixed_on_reask(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer() as server:
        server.script(Turn(text='{"correct": true}'), Turn(text='{"explanation": "ok", "correct": true}'))
        reply = asyncio.run(ask_structured(_generator(tmp_path, server), MESSAGES, Verdict))
        assert reply.parsed.correct is True and server.calls == 2


def test_transport_failures_still_raise(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIChatServer() as server:
        server.default = lambda r: server_error(500)
        with pytest.raises(ProviderError):
            asyncio.run(ask_structured(_generator(tmp_path, server, max_retries=1), MESSAGES, Verdict))


class Scripted(Generator):
    """A plain generator (no chat): replies from a script, records what it was asked."""

    name = "scripted"

    def __init__(self, replies):
        super().__init__()
        self.replies, self.asked = list(replies), []

    async def generate(self, request):
        self.asked.append(request.messages)
        return Generation(text=self.replies.pop(0))


def test_plain_generator_gets_the_schema_and_is_reasked():
    generator = Scripted(["no idea", 'Sure: {"explanation": "blue", "correct": false}'])
    reply = asyncio.run(ask_structured(generator, MESSAGES, Verdict))
    assert reply.parsed == Verdict(explanation="blue", correct=False)
    assert "schema" in generator.asked[0][-1]["content"] and "not valid" in generator.asked[1][-1]["content"]
    stuck = asyncio.run(ask_structured(Scripted(["x", "y", "z"]), MESSAGES, Verdict))
    assert stuck.parsed is None and stuck.raw == "z"


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("YES", "yes"),
        ("The answer is not known. NO", "no"),
        ("NOT KNOWN", None),
        ("Explanation: it says no such thing... Verdict: Yes.", "yes"),
        ("no-one knows", None),
        ("", None),
    ],
)
def test_verdicts_are_whole_words_and_the_last_one_counts(text, verdict):
    assert find_verdict(text, ["yes", "no"]) == verdict
