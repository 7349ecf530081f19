"""Boolean agent RAG, simple and advanced, through every branch, driven by the real openai client against a
scripted local chat-completions server. Token sums are checked against the usage the server reported."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext, Corpus
from ragassay.errors import ProviderError
from ragassay.models import Document, Sample
from ragassay.plugin_manager import get_plugin_host
from ragassay.reference_rags.boolean_agent import BooleanAgentAdvancedRAG, BooleanAgentRAG

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

DOCS = [
    Document(id="salmon", text="Salmon swim upstream to spawn in the rivers of Norway."),
    Document(id="bees", text="Bees make honey from nectar in their hives."),
]
SAMPLE = Sample(question_id="q", question="Where do salmon spawn?")


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def build(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agent")
    server.reset()
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")

    def make(cls, **options):
        generator = context.build(
            "generator",
            {
                "name": "openai",
                "options": {"model": "gpt-4o-mini", "base_url": server.url + "/v1", "cache": False, "backoff_s": 0.01},
            },
        )
        parts = {
            "chunker": context.build("chunker", "recursive"),
            "retriever": context.build("retriever", "bm25"),
            "generator": generator,
        }
        rag = cls(cls.Options(top_k=1, **options), parts=parts, context=context)
        rag.prepare(Corpus(DOCS))
        return rag

    return make


def answer(rag, sample=SAMPLE):
    async def go():
        try:
            return await rag.answer(sample)
        finally:
            await rag.parts["generator"].client.aclose() if hasattr(rag.parts["generator"].client, "aclose") else None

    return asyncio.run(go())


def tools_of(request):
    return [t["function"]["name"] for t in request.json.get("tools", [])]


def test_simple_retrieves_when_the_tool_is_called_with_true(server, build):
    server.script(
        Turn(text=None, tool_calls=[("query_database", {"retrieve": True})], usage=(50, 5, 0)),
        Turn(text="In Norway [1].", usage=(120, 8, 0)),
    )
    output = answer(build(BooleanAgentRAG))
    first, second = server.requests
    assert tools_of(first) == ["query_database"] and first.json.get("tool_choice", "auto") == "auto"
    assert first.json["tools"][0]["function"]["description"].startswith("Set to true to gain additional information")
    assert "only do this if necessary" in first.json["tools"][0]["function"]["description"].lower()
    assert "tools" not in second.json and "Sources:\n[1] Salmon swim upstream" in second.json["messages"][-1]["content"]
    assert output.retrieved is True and output.answer == "In Norway [1]." and output.context_document_ids == ["salmon"]
    assert (output.usage.input_tokens, output.usage.output_tokens, output.usage.calls) == (170, 13, 2)
    assert sum(u.input_tokens for u in output.usage.by_model.values()) == 170  # priced per model
    assert [c["step"] for c in output.trace["calls"]] == ["decide_or_answer", "answer_with_sources"]


def test_simple_answers_directly_without_a_tool_call(server, build):
    server.script(Turn(text="Upstream in rivers.", usage=(40, 4, 0)))
    output = answer(build(BooleanAgentRAG))
    assert server.calls == 1
    assert output.retrieved is False and output.answer == "Upstream in rivers." and output.contexts == []
    assert output.trace["decision"] == "no tool call" and output.usage.input_tokens == 40


def test_simple_tool_called_with_false_answers_without_sources(server, build):
    server.script(
        Turn(text=None, tool_calls=[("query_database", {"retrieve": False})], usage=(40, 3, 0)),
        Turn(text="They spawn in rivers.", usage=(30, 5, 0)),
    )
    output = answer(build(BooleanAgentRAG))
    assert server.calls == 2 and "tools" not in server.requests[1].json
    assert output.retrieved is False and output.answer == "They spawn in rivers."
    assert (output.usage.input_tokens, output.usage.output_tokens) == (70, 8)


def test_simple_malformed_arguments_retrieve_and_say_so(server, build):
    server.script(Turn(text=None, tool_calls=[("query_database", '{"retrieve": "maybe"}')]), Turn(text="Norway [1]."))
    output = answer(build(BooleanAgentRAG))
    assert output.retrieved is True and "malformed tool arguments" in output.trace["decision"]


def test_advanced_answers_then_is_forced_to_decide_then_retrieves(server, build):
    server.script(
        Turn(text="I think in lakes.", usage=(30, 6, 0)),
        Turn(text=None, tool_calls=[("query_database", {"retrieve": True})], usage=(45, 5, 0)),
        Turn(text="In the rivers of Norway [1].", usage=(130, 9, 0)),
    )
    output = answer(build(BooleanAgentAdvancedRAG))
    base, decide, final = server.requests
    assert "tools" not in base.json
    assert decide.json["tool_choice"] == {"type": "function", "function": {"name": "query_database"}}
    assert decide.json["tools"][0]["function"]["description"] == (
        "Set to true if you could have answered the last question better with more information."
    )
    assert decide.json["messages"][-1] == {"role": "assistant", "content": "I think in lakes."}
    assert "Sources:" in final.json["messages"][-1]["content"]
    assert output.retrieved is True and output.answer == "In the rivers of Norway [1]."
    assert (output.usage.input_tokens, output.usage.output_tokens, output.usage.calls) == (205, 20, 3)


def test_advanced_keeps_the_first_answer_when_it_would_not_improve(server, build):
    server.script(
        Turn(text="Upstream in rivers.", usage=(30, 4, 0)),
        Turn(text=None, tool_calls=[("query_database", {"retrieve": False})], usage=(40, 5, 0)),
    )
    output = answer(build(BooleanAgentAdvancedRAG))
    assert server.calls == 2
    assert output.retrieved is False and output.answer == "Upstream in rivers." and output.context_ids == []
    assert (output.usage.input_tokens, output.usage.output_tokens) == (70, 9)


def test_advanced_forced_call_never_made_fails_the_sample(server, build):
    server.script(Turn(text="Rivers."), Turn(text="no tool"), Turn(text="still no tool"), Turn(text="nope"))
    with pytest.raises(ProviderError, match="must call the tool 'query_database'"):
        answer(build(BooleanAgentAdvancedRAG))


def test_a_generator_without_tool_calls_is_refused(tmp_path):
    from ragassay.errors import ConfigError

    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path)
    parts = {
        "chunker": context.build("chunker", "recursive"),
        "retriever": context.build("retriever", "bm25"),
        "generator": context.build("generator", "extractive"),
    }
    rag = BooleanAgentRAG(BooleanAgentRAG.Options(), parts=parts, context=context)
    with pytest.raises(ConfigError, match="rag 'boolean_agent'.*generator 'extractive' does not support chat"):
        rag.prepare(Corpus(DOCS))


def test_chat_is_a_declaration_not_a_method_probe(tmp_path):
    """A generator with a `chat` attribute that does not declare supports_chat is refused; a declared one works."""
    from ragassay import ConfigError, Generation, Generator

    class Undeclared(Generator):
        name = "undeclared"

        async def generate(self, request):
            return Generation(text="")

        async def chat(self, messages, **kwargs):  # looks like chat, but the class does not declare it
            raise AssertionError("never called")

    class Declared(Undeclared):
        name = "declared"
        supports_chat = True

    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path)
    parts = {"chunker": context.build("chunker", "recursive"), "retriever": context.build("retriever", "bm25")}
    rag = BooleanAgentRAG(BooleanAgentRAG.Options(), parts={**parts, "generator": Undeclared()}, context=context)
    with pytest.raises(ConfigError, match="generator 'undeclared' does not support chat"):
        rag.prepare(Corpus(DOCS))
    BooleanAgentRAG(BooleanAgentRAG.Options(), parts={**parts, "generator": Declared()}, context=context).prepare(
        Corpus(DOCS)
    )
