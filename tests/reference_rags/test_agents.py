"""decomposing_agent and iterative_agent driven by the real openai client against a loopback chat server whose
scripted model follows their prompts (tests/agent_server.py): the hops retrieved, the trajectory's steps and their
usage, the stop decisions, max_steps, and the recorded fallbacks of unparseable replies."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext, Corpus
from ragassay.models import Document, Sample
from ragassay.plugin_manager import get_plugin_host
from ragassay.reference_rags.agents import DecomposingAgentRAG, IterativeAgentRAG

from agent_server import DOCS, QUESTIONS, USAGE, following, planned, searching_forever, skipping
from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

FALCON = "Where is the client that commissioned Project Falcon based?"
SAMPLE = Sample(question_id="falcon", question=FALCON)


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def build(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-agents")
    server.reset()
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")

    def make(cls, default=following, **options):
        server.default = default
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
        rag = cls(cls.Options(**{"top_k": 1, **options}), parts=parts, context=context)
        rag.prepare(Corpus([Document(id=f"corpus/{name}", text=text) for name, text in DOCS.items()]))
        return rag

    return make


def answer(rag, sample=SAMPLE):
    return asyncio.run(rag.answer(sample))


def kinds(output):
    return [(s.kind, s.attributes.get("call")) for s in output.trajectory]


def usage_of(*calls):
    return tuple(sum(USAGE[c][i] for c in calls) for i in range(2))


def test_decomposing_agent_retrieves_every_hop_and_records_its_trajectory(server, build):
    output = answer(build(DecomposingAgentRAG))
    assert kinds(output) == [
        ("model_call", "decompose"),
        ("retrieval", None),
        ("model_call", "read"),
        ("retrieval", None),
        ("model_call", "answer"),
        ("answer", None),
    ]
    decompose, hop1, read, hop2, final, last = output.trajectory
    assert [s.id for s in output.trajectory] == ["s1", "s2", "s3", "s4", "s5", "s6"]
    assert decompose.attributes["sub_questions"] == list(QUESTIONS[FALCON][0])
    assert (hop1.query, hop1.document_ids, hop1.attributes["hop"]) == (
        "Which client commissioned Project Falcon?",
        ["corpus/falcon.md"],
        1,
    )
    assert read.attributes["intermediate_answer"] == "Northwind Traders"
    assert (hop2.query, hop2.document_ids) == ("Where is Northwind Traders based?", ["corpus/northwind.md"])
    assert hop2.attributes["sub_question"] == "Where is #1 based?" and len(hop2.scores) == 1 and hop2.scores[0] > 0
    assert output.context_document_ids == ["corpus/falcon.md", "corpus/northwind.md"]
    assert output.context_ids == hop1.context_ids + hop2.context_ids
    assert output.answer == "Oslo [2]." and last.output == output.answer and final.output == output.answer
    # every model call's usage as the server reported it, summed on the output and per model for pricing
    assert [(s.usage.input_tokens, s.usage.output_tokens) for s in (decompose, read, final)] == [
        USAGE["decompose"][:2],
        USAGE["read"][:2],
        USAGE["answer"][:2],
    ]
    assert (output.usage.input_tokens, output.usage.output_tokens) == usage_of("decompose", "read", "answer")
    assert output.usage.calls == 3 and list(output.usage.by_model) == ["openai/gpt-4o-mini"]
    assert all(s.latency_s is not None and s.latency_s >= 0 for s in output.trajectory[:-1])
    assert output.trace["fallbacks"] == [] and output.trace["prompts"]["decompose"] == "self-ask-decompose/1"
    assert server.calls == 3 and "Follow up: Which client commissioned Project Falcon?" in read.input


def test_a_model_that_skips_the_second_hop_gives_one_retrieval(server, build):
    output = answer(build(DecomposingAgentRAG, default=skipping))
    assert kinds(output) == [
        ("model_call", "decompose"),
        ("retrieval", None),
        ("model_call", "answer"),
        ("answer", None),
    ]
    assert output.context_document_ids == ["corpus/falcon.md"] and output.answer == "I don't know."
    assert output.trace["fallbacks"] == []  # a plan the model made, not a parse failure


def test_max_hops_drops_the_extra_follow_ups_and_says_so(server, build):
    output = answer(build(DecomposingAgentRAG, max_hops=1))
    decompose = output.trajectory[0]
    assert decompose.attributes["dropped"] == ["Where is #1 based?"]
    assert sum(s.kind == "retrieval" for s in output.trajectory) == 1 and server.calls == 2  # no read: nobody needs #1


def test_an_unparseable_decomposition_falls_back_to_the_question_and_records_it(server, build):
    server.script(Turn(text="Sure! Happy to help with that.", usage=(50, 7, 0)))
    output = answer(build(DecomposingAgentRAG))
    decompose, retrieval = output.trajectory[:2]
    assert "no 'Follow up:' line" in decompose.attributes["fallback"]
    assert output.trace["fallbacks"] == [f"s1: {decompose.attributes['fallback']}"]
    assert retrieval.query == FALCON and output.trace["decision"] == "fallback"


def test_no_follow_up_needed_is_a_decision_not_a_fallback(server, build):
    server.script(Turn(text=" No.", usage=(50, 2, 0)))
    output = answer(build(DecomposingAgentRAG))
    assert output.trajectory[1].query == FALCON and "fallback" not in output.trajectory[0].attributes
    assert output.trace["fallbacks"] == []


def test_an_unreadable_intermediate_answer_lets_the_follow_up_stand_in(server, build):
    server.script(
        Turn(text="Follow up: Which client commissioned Project Falcon?\nFollow up: Where is #1 based?"),
        Turn(text="unknown"),
    )
    output = answer(build(DecomposingAgentRAG))
    read, hop2 = output.trajectory[2], output.trajectory[3]
    assert "no intermediate answer" in read.attributes["fallback"]
    assert hop2.query == "Where is (Which client commissioned Project Falcon?) based?"


def test_iterative_agent_searches_reads_and_stops_when_told(server, build):
    output = answer(build(IterativeAgentRAG))
    assert kinds(output) == [
        ("model_call", "act"),
        ("retrieval", None),
        ("model_call", "act"),
        ("retrieval", None),
        ("model_call", "act"),
        ("model_call", "answer"),
        ("answer", None),
    ]
    first, hop1, second, hop2, finish = output.trajectory[:5]
    assert (first.attributes["action"], hop1.query) == ("search", "Which client commissioned Project Falcon?")
    assert second.attributes["action"] == "search" and hop2.query == "Where is Northwind Traders based?"
    assert "Observation 1: [1] Project Falcon was commissioned by Northwind Traders." in second.input
    assert (finish.attributes["action"], finish.attributes["argument"]) == ("finish", "Oslo")
    assert output.trace["stop"] == "finish" and output.answer == "Oslo [2]."
    assert output.context_document_ids == ["corpus/falcon.md", "corpus/northwind.md"]
    assert (output.usage.input_tokens, output.usage.output_tokens) == usage_of("act", "act", "act", "answer")
    stops = [request.json.get("stop") for request in server.requests[:3]]
    assert stops == [["\nObservation 1:"], ["\nObservation 2:"], ["\nObservation 3:"]]  # ReAct's stop sequence


def test_iterative_agent_answers_with_finish_when_asked(server, build):
    output = answer(build(IterativeAgentRAG, answer="finish"))
    assert output.answer == "Oslo" and server.calls == 3
    assert output.trajectory[-1].attributes == {"answered_from": "finish", "stop": "finish"}


def test_iterative_agent_respects_max_steps(server, build):
    output = answer(build(IterativeAgentRAG, default=searching_forever, max_steps=3))
    retrievals = [s for s in output.trajectory if s.kind == "retrieval"]
    assert len(retrievals) == 3 and output.trace["stop"] == "max_steps"
    assert sum(s.attributes.get("call") == "act" for s in output.trajectory) == 3 and server.calls == 4
    assert output.context_document_ids == ["corpus/falcon.md", "corpus/northwind.md"]  # the union, once each


def test_iterative_agent_unparseable_first_reply_searches_the_question(server, build):
    server.script(Turn(text="Let me think about it."), Turn(text="Hmm, still thinking."))
    output = answer(build(IterativeAgentRAG))
    first, retrieval, second = output.trajectory[:3]
    assert "searched with the question" in first.attributes["fallback"] and retrieval.query == FALCON
    assert "stopped searching" in second.attributes["fallback"] and output.trace["stop"] == "fallback"
    assert len(output.trace["fallbacks"]) == 2 and output.trajectory[-1].kind == "answer"


def test_prompts_must_keep_their_placeholders():
    with pytest.raises(ValueError, match=r"\{question\}"):
        DecomposingAgentRAG.Options(decompose_prompt="Decompose this.")
    with pytest.raises(ValueError, match=r"\{scratchpad\}"):
        IterativeAgentRAG.Options(react_prompt="Question: {question}")
    with pytest.raises(ValueError, match="extra"):
        IterativeAgentRAG.Options(max_hops=2)


def test_the_estimate_patterns_span_the_fewest_and_most_calls(build):
    from ragassay.models import Hints

    hints = Hints(answer_chars=10, context_chars=300, contexts=1)
    decomposing = build(DecomposingAgentRAG, max_hops=3).call_pattern(SAMPLE, hints)
    assert (decomposing.calls_low, decomposing.calls_high, decomposing.model) == (2, 4, "openai/gpt-4o-mini")
    assert decomposing.prompt_chars > len(FALCON) + 300
    iterative = build(IterativeAgentRAG, max_steps=5).call_pattern(SAMPLE, hints)
    assert (iterative.calls_low, iterative.calls_high) == (2, 6)
    finishing = build(IterativeAgentRAG, max_steps=5, answer="finish").call_pattern(SAMPLE, hints)
    assert (finishing.calls_low, finishing.calls_high) == (1, 6) and finishing.prompt_chars < iterative.prompt_chars
    assert build(DecomposingAgentRAG).call_pattern(SAMPLE, Hints(answer_chars=10, context_chars=None)) is None


def test_a_planned_model_searches_its_plan_with_both_agents(server, build):
    plans = {FALCON: ["Which client commissioned Project Falcon?", "Where is Northwind Traders based?"]}
    for cls in (DecomposingAgentRAG, IterativeAgentRAG):
        output = answer(build(cls, default=planned(plans)))
        assert [s.query for s in output.trajectory if s.kind == "retrieval"] == plans[FALCON], cls.name
        assert output.context_document_ids == ["corpus/falcon.md", "corpus/northwind.md"], cls.name
    skipped = answer(build(DecomposingAgentRAG, default=planned(plans, hops=1)))
    assert [s.document_ids for s in skipped.trajectory if s.kind == "retrieval"] == [["corpus/falcon.md"]]
