"""conversational_naive: each query mode on a small corpus where only the history names the project the last turn
("And who manages it?") is about; the rewrite mode through the real openai client against a scripted loopback
chat-completions server."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from ragassay.components import ComponentContext, Corpus
from ragassay.errors import ConfigError
from ragassay.models import Document, Sample, Turn, turn_id
from ragassay.plugin_manager import get_plugin_host
from ragassay.reference_rags.conversational import CONDENSE_QUESTION_PROMPT, ConversationalNaiveRAG
from ragassay.reference_rags.naive import NaiveRAG

from servers.openai_chat import OpenAIChatServer
from servers.openai_chat import Turn as Reply

DOCS = [
    Document(
        id="falcon",
        text="Project Falcon builds a weather satellite for the northern fleet. Dana Whitfield manages Project Falcon.",
    ),
    Document(id="harbor", text="Lee Park manages the harbor office and manages its budget."),
    Document(id="bees", text="Bees make honey from nectar in their hives."),
    Document(id="stars", text="Stars are fusing hydrogen into helium."),
    Document(id="salmon", text="Salmon swim upstream to spawn in rivers."),
]
HISTORY = [
    Turn(speaker="user", text="Tell me about Project Falcon."),
    Turn(speaker="agent", text="It builds a weather satellite."),
]
TURN = Sample(
    question_id=turn_id("c1", 2),
    question="And who manages it?",
    conversation_id="c1",
    turn=2,
    history=HISTORY,
    reference_context_ids=["falcon"],
)
SINGLE = Sample(question_id="q", question="Who manages the harbor office?")
REWRITE = "Who manages Project Falcon?"


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def context(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-conversational")
    return ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")


def openai(server) -> dict:
    options = {"model": "gpt-4o-mini", "base_url": server.url + "/v1", "cache": False, "backoff_s": 0.01}
    return {"name": "openai", "options": options}


def build(context, cls=ConversationalNaiveRAG, generator="extractive", **options):
    parts = {
        "chunker": context.build("chunker", "recursive"),
        "retriever": context.build("retriever", "bm25"),
        "generator": context.build("generator", generator),
    }
    rag = cls(cls.Options(top_k=1, **options), parts=parts, context=context)
    rag.prepare(Corpus(DOCS))
    return rag


def answer(rag, sample=TURN):
    return asyncio.run(rag.answer(sample))


def test_last_turn_retrieves_with_the_turn_alone_and_misses_the_project(context):
    output = answer(build(context, query="last_turn"))
    assert output.context_document_ids == ["harbor"] and output.query is None
    assert output.trace["query_mode"] == "last_turn" and "rewrite" not in output.trace


def test_history_joins_the_user_turns_and_finds_the_project(context):
    output = answer(build(context, query="history"))
    assert output.context_document_ids == ["falcon"]
    assert output.query == "Tell me about Project Falcon.\nAnd who manages it?"
    assert output.answer == "Dana Whitfield manages Project Falcon."  # the extractive reader, on the turn's text
    with_agent = answer(build(context, query="history", agent_turns=True))
    assert with_agent.query == "Tell me about Project Falcon.\nIt builds a weather satellite.\nAnd who manages it?"


def test_rewrite_sends_the_condense_prompt_and_retrieves_with_the_reply(server, context):
    server.reset().script(
        Reply(text=f"  {REWRITE}\n", usage=(60, 7, 0)), Reply(text="Dana Whitfield [1].", usage=(90, 5, 0))
    )
    output = answer(build(context, generator=openai(server), query="rewrite"))
    rewrite_call, answer_call = server.requests
    prompt = rewrite_call.json["messages"][-1]["content"]
    assert prompt.startswith("Given the following conversation and a follow up question, rephrase the follow up")
    assert "Chat History:\nHuman: Tell me about Project Falcon.\nAssistant: It builds a weather satellite.\n" in prompt
    assert prompt.endswith("Follow Up Input: And who manages it?\nStandalone question:")
    assert output.query == REWRITE and output.context_document_ids == ["falcon"]
    assert output.trace["rewrite"]["prompt"] == prompt and output.trace["rewrite"]["reply"].strip() == REWRITE
    roles = [(m["role"], m["content"]) for m in answer_call.json["messages"]]
    assert roles[1:3] == [("user", HISTORY[0].text), ("assistant", HISTORY[1].text)]
    assert roles[3][0] == "user" and roles[3][1].startswith("Sources:\n[1] Project Falcon")
    assert roles[3][1].endswith("Question: And who manages it?")
    assert (output.usage.input_tokens, output.usage.output_tokens, output.usage.calls) == (150, 12, 2)
    assert output.answer == "Dana Whitfield [1]."


def test_a_separate_rewriter_feeds_the_extractive_reader_the_standalone_question(server, context):
    server.reset().script(Reply(text=REWRITE))
    output = answer(build(context, query="rewrite", rewriter=openai(server)))
    assert server.calls == 1 and output.query == REWRITE
    assert output.answer == "Dana Whitfield manages Project Falcon."


def test_an_empty_rewrite_falls_back_to_the_turn_and_says_so(server, context):
    server.reset().script(Reply(text="   "))
    output = answer(build(context, query="rewrite", rewriter=openai(server)))
    assert output.query is None and output.context_document_ids == ["harbor"]
    assert "replied with nothing" in output.trace["rewrite"]["fallback"]


@pytest.mark.parametrize("mode", ["last_turn", "history", "rewrite"])
def test_a_single_question_is_answered_as_the_naive_rag_answers_it(server, context, mode):
    server.reset()
    naive = answer(build(context, NaiveRAG, generator=openai(server)), SINGLE)
    conversational = answer(build(context, generator=openai(server), query=mode), SINGLE)
    first, second = server.requests  # one call each: no rewrite call without history
    assert first.json == second.json
    assert conversational.query is None and "rewrite" not in conversational.trace
    assert conversational.context_ids == naive.context_ids and conversational.answer == naive.answer


def test_a_rewriter_that_is_no_language_model_is_a_configuration_error(context):
    with pytest.raises(ConfigError, match="generator 'extractive' \\(the rewriter\\) is not a language model"):
        build(context, query="rewrite")


def test_the_rewrite_prompt_must_show_the_history_and_the_question():
    with pytest.raises(ValidationError, match="lacks \\{chat_history\\}"):
        ConversationalNaiveRAG.Options(rewrite_prompt="Rewrite: {question}")
    assert "{chat_history}" in CONDENSE_QUESTION_PROMPT and "{question}" in CONDENSE_QUESTION_PROMPT


def test_the_retrieval_step_carries_the_query_to_the_answer_step(context):
    rag = build(context, query="history")

    async def steps():
        return await rag.answer_from(TURN, await rag.retrieve_step(TURN))

    output = asyncio.run(steps())
    assert output.query == answer(rag).query and "conversation" not in output.trace["retrieval"]


def test_the_estimate_counts_a_rewrite_call_only_for_a_turn_with_history(server, context):
    from ragassay.models import Hints

    hints = Hints(answer_chars=100, context_chars=400)
    rag = build(context, generator=openai(server), query="rewrite")
    answer_call, rewrite_call = rag.call_pattern(TURN, hints)
    assert (answer_call.calls_low, rewrite_call.calls_low) == (1, 1)
    assert rewrite_call.prompt_chars > len(CONDENSE_QUESTION_PROMPT) and rewrite_call.model == "openai/gpt-4o-mini"
    assert rag.call_pattern(SINGLE, hints).calls_low == 1  # no history: the answer call only
    assert build(context, generator=openai(server), query="history").call_pattern(TURN, hints).calls_low == 1
