"""simulated_user: replays a GRAMMAR chain with the system it talks to, asking each turn as written when the
system's previous answer named what the turn refers to, explicitly otherwise. The system talked to is a scripted
one (answers from a table, keeps what it was asked) or conversational_naive with the real openai client against a
scripted loopback server (the response cache serves the replayed earlier turns)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from ragassay.components import ComponentContext, Corpus, RAGSystem
from ragassay.errors import DatasetError
from ragassay.models import Document, RAGOutput, Sample, TokenUsage, Turn, turn_id
from ragassay.plugin_manager import get_plugin_host
from ragassay.reference_rags.simulated_user import SimulatedUserRAG

from servers.openai_chat import OpenAIChatServer
from servers.openai_chat import Turn as Reply

T1 = "Which project builds a weather satellite?"
T2 = "And who manages it?"
T3 = "Where does she work?"
EXPLICIT_T2 = "I mean Project Falcon: Who manages Project Falcon?"
EARLIER = [
    {"question": T1, "standalone_question": T1, "refers_to": None},
    {"question": T2, "standalone_question": "Who manages Project Falcon?", "refers_to": "Project Falcon"},
]
DOCS = [
    Document(id="falcon", text="Project Falcon builds a weather satellite. Dana Whitfield manages Project Falcon."),
    Document(id="harbor", text="Lee Park manages the harbor office and manages its budget."),
    Document(id="bees", text="Bees make honey from nectar in their hives."),
]


def chain_sample(turn: int) -> Sample:
    """Turn ``turn`` (2 or 3) of the chain, as the grammar source writes it (with its templated history)."""
    own = {
        2: ("Who manages Project Falcon?", "Project Falcon"),
        3: ("Where does Dana Whitfield work?", "Dana Whitfield"),
    }[turn]
    chain = {"sql": "", "kind": "follow", "standalone_question": own[0], "refers_to": own[1]}
    chain |= {"depends_on_history": True, "earlier": EARLIER[: turn - 1]}
    history = [Turn(speaker="user", text=T1), Turn(speaker="agent", text="Project Falcon")]
    return Sample(
        question_id=turn_id("c1", turn),
        question={2: T2, 3: T3}[turn],
        conversation_id="c1",
        turn=turn,
        history=history if turn == 2 else history + [Turn(speaker="user", text=T2), Turn(speaker="agent", text="x")],
        reference_answers=["gold"],
        metadata={"chain": chain},
    )


class ScriptedSystem(RAGSystem):
    """Answers each question from a table ("I don't know." otherwise) and keeps the samples it was asked."""

    name = "scripted_answers"

    def __init__(self, answers: dict[str, str]):
        super().__init__()
        self.answers, self.asked, self.prepared = answers, [], 0

    def prepare(self, corpus):
        self.prepared += 1

    async def answer(self, sample):
        self.asked.append(sample)
        text = self.answers.get(sample.question, "I don't know.")
        return RAGOutput(answer=text, usage=TokenUsage(input_tokens=10, output_tokens=2, calls=1))


def simulated(inner, context=None, **options) -> SimulatedUserRAG:
    rag = SimulatedUserRAG(SimulatedUserRAG.Options(system="inner", **options), context=context)
    rag.wrapped = inner
    rag.prepare(Corpus(DOCS))
    return rag


def answer(rag, sample):
    return asyncio.run(rag.answer(sample))


def test_named_referents_let_the_user_keep_the_pronouns():
    inner = ScriptedSystem({T1: "Project Falcon does.", T2: "Dana Whitfield.", T3: "At the northern fleet."})
    output = answer(simulated(inner), chain_sample(3))
    assert [s.question for s in inner.asked] == [T1, T2, T3] and inner.prepared == 1
    assert inner.asked[-1].history == [
        Turn(speaker="user", text=T1),
        Turn(speaker="agent", text="Project Falcon does."),
        Turn(speaker="user", text=T2),
        Turn(speaker="agent", text="Dana Whitfield."),
    ]
    assert [s.question_id for s in inner.asked] == ["c1::1", "c1::2", "c1::3"]
    assert inner.asked[-1].reference_answers == ["gold"]  # the sample itself at its own turn
    assert output.answer == "At the northern fleet." and output.query is None
    record = output.trace["simulated_user"]
    assert [t["phrasing"] for t in record["turns"]] == ["as written", "dependent", "dependent"]
    assert record["question"] == T3 and record["turns"][1]["agent"] == "Dana Whitfield."
    assert (output.usage.input_tokens, output.usage.calls) == (30, 3)


def test_an_unnamed_referent_makes_the_user_state_the_turn_explicitly():
    inner = ScriptedSystem({T1: "I could not find it.", EXPLICIT_T2: "dana whitfield manages it.", T3: "Offshore."})
    output = answer(simulated(inner), chain_sample(3))
    assert [s.question for s in inner.asked] == [T1, EXPLICIT_T2, T3]  # 'Dana Whitfield' named, any case
    assert [t["phrasing"] for t in output.trace["simulated_user"]["turns"]] == ["as written", "explicit", "dependent"]
    second = answer(simulated(ScriptedSystem({T1: "I could not find it."})), chain_sample(2))
    assert second.query == EXPLICIT_T2 and second.trace["simulated_user"]["question"] == EXPLICIT_T2


def test_the_explicit_form_follows_the_template():
    inner = ScriptedSystem({})
    answer(simulated(inner, explicit_template="{standalone_question} (that is, {question})"), chain_sample(2))
    assert inner.asked[-1].question == "Who manages Project Falcon? (that is, And who manages it?)"
    with pytest.raises(ValidationError, match="must contain \\{standalone_question\\}"):
        SimulatedUserRAG.Options(system="inner", explicit_template="I mean {refers_to}")


def test_a_sample_without_a_chain_is_refused_by_name():
    rag = simulated(ScriptedSystem({}))
    plain = Sample(question_id="q7", question="What is BM25?")
    with pytest.raises(DatasetError, match="sample 'q7' has no metadata\\['chain'\\]"):
        answer(rag, plain)
    (warning,) = rag.check_samples([plain, chain_sample(2)])
    assert "1 sample(s) have no metadata['chain'] (q7)" in warning


def test_a_chain_that_misses_earlier_turns_is_refused():
    sample = chain_sample(3)
    sample.metadata["chain"]["earlier"] = EARLIER[:1]
    with pytest.raises(DatasetError, match="'c1::3' is turn 3 but its chain has 1 earlier turn"):
        answer(simulated(ScriptedSystem({})), sample)


def test_a_failing_earlier_turn_names_the_turn():
    class Failing(ScriptedSystem):
        async def answer(self, sample):
            raise TimeoutError("no reply")

    with pytest.raises(RuntimeError, match="'c1': system 'inner' failed at earlier turn 1: TimeoutError"):
        answer(simulated(Failing({})), chain_sample(2))


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def context(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-simulated-user")
    return ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")


def openai(server, cache=False) -> dict:
    options = {"model": "gpt-4o-mini", "base_url": server.url + "/v1", "cache": cache, "backoff_s": 0.01}
    return {"name": "openai", "options": options}


def test_a_phrasing_model_rewrites_each_turn_with_the_seed(server, context):
    server.reset()
    server.default = lambda request: Reply(text=f"hey, {server.last_user_text(request).split('Message: ')[-1]}")
    inner = ScriptedSystem({})
    output = answer(simulated(inner, context, phrasing=openai(server), seed=7), chain_sample(2))
    assert server.calls == 2 and all(r.json["seed"] == 7 for r in server.requests)
    assert "Pretend you are a user of an LLM app." in server.last_user_text(server.requests[0])
    assert [s.question for s in inner.asked] == [f"hey, {T1}", f"hey, {EXPLICIT_T2}"]
    turns = output.trace["simulated_user"]["turns"]
    assert turns[1]["phrasing"] == "explicit" and turns[1]["phrased"]["templated"] == EXPLICIT_T2
    assert output.usage.calls == 4  # two phrasing calls, two answers


def test_replayed_earlier_turns_are_served_by_the_response_cache(server, context):
    server.reset()
    server.default = lambda request: Reply(
        text="Project Falcon [1]." if T1 in server.last_user_text(request) else "Dana Whitfield [1].", usage=(50, 5, 0)
    )
    parts = {
        "chunker": context.build("chunker", "recursive"),
        "retriever": context.build("retriever", "bm25"),
        "generator": context.build("generator", openai(server, cache=True)),
    }
    registry = context.registry
    cls = registry.get("rag", "conversational_naive").cls
    inner = cls(cls.Options(top_k=1, query="history"), parts=parts, context=context)
    rag = simulated(inner, context)
    first_turn = chain_sample(2).model_copy(update={"question_id": "c1::1", "turn": 1, "history": [], "question": T1})
    first_turn.metadata = {"chain": {"standalone_question": T1, "refers_to": None, "earlier": []}}
    answer(rag, first_turn)
    assert server.calls == 1
    output = answer(rag, chain_sample(2))
    assert server.calls == 2  # turn 1 replayed from the cache, turn 2 asked
    assert (output.usage.calls, output.usage.cache_hits, output.usage.input_tokens) == (1, 1, 100)
    assert output.trace["simulated_user"]["turns"][1]["phrasing"] == "dependent"
    assert output.query == f"{T1}\n{T2}" and output.context_document_ids == ["falcon"]


def test_the_estimate_is_the_systems_own_turn_and_a_phrasing_call(server, context):
    from ragassay.models import CallPattern, Hints

    class Estimated(ScriptedSystem):
        def call_pattern(self, sample, hints):
            return CallPattern(1, 1, len(sample.question), 10, "openai/gpt-4o-mini")

    hints = Hints(answer_chars=100, context_chars=400)
    assert simulated(Estimated({})).call_pattern(chain_sample(3), hints).calls_low == 1
    own, phrasing = simulated(Estimated({}), context, phrasing=openai(server)).call_pattern(chain_sample(3), hints)
    assert (own.calls_low, phrasing.calls_low, phrasing.note) == (1, 1, "phrasing")
