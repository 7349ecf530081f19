"""The user's own conversational RAG through the adapters: the python callable gets a turn's history when it names
a ``history`` parameter (and the run warns when turns have a history it never sees), the http adapter posts the
history, conversation id and turn (at a local server), and precomputed rows are found by ``conversation::turn``."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import textwrap

import pytest

import ragassay
from ragassay import DatasetError
from ragassay.components import ComponentContext
from ragassay.models import Sample, Turn, turn_id
from ragassay.reference_rags.adapters.http_adapter import HttpRAG
from ragassay.reference_rags.adapters.precomputed import PrecomputedRAG
from ragassay.reference_rags.adapters.python_adapter import conversation_parameters

from servers.base import JSONServer, Reply

#: (conversation id, [(question, the answer)]) in turn order
CONVERSATIONS = [
    ("c1", [("Who built the alpha reactor?", "Ada Lovelace Labs"), ("When?", "1999"), ("Where is it?", "Oslo")]),
    ("c2", [("Who fished salmon?", "O'Brien"), ("In which river?", "the Beta river")]),
]
CONVERSATIONAL_RAG = """
import json

ANSWERS = {"Who built the alpha reactor?": "Ada Lovelace Labs", "Who fished salmon?": "O'Brien",
           "When?": "1999", "Where is it?": "Oslo", "In which river?": "the Beta river"}

def answer(question, history, conversation_id=None, turn=None):
    if history and history[0]["text"].startswith("Who built"):
        rewrite = "alpha reactor: " + question
    elif history:
        rewrite = "salmon: " + question
    else:
        rewrite = question
    seen = [(t["speaker"], t["text"]) for t in history]
    seen = {"conversation_id": conversation_id, "turn": turn, "history": seen}  # what it got, as its answer
    return {"answer": json.dumps(seen), "query": rewrite}

def single(question):
    return ANSWERS.get(question, "unknown")

def with_sample(question, sample):
    return str(len(sample.history))
"""
CONFIG = """
[dataset]
options = {{ path = "qa.jsonl" }}
[systems.mine]
rag = "python"
options = {{ callable = "user_rag:{callable}", path = ["src"] {extra} }}
[evaluation]
metrics = ["exact_match"]
"""


def turn_samples() -> list[Sample]:
    """Every turn of :data:`CONVERSATIONS` as a sample, then one single question ``q-alone``."""
    samples = []
    for conversation, turns in CONVERSATIONS:
        history: list[Turn] = []
        for position, (question, answer) in enumerate(turns, start=1):
            samples.append(
                Sample(
                    question_id=turn_id(conversation, position),
                    question=question,
                    reference_answers=[answer],
                    conversation_id=conversation,
                    turn=position,
                    history=list(history),
                )
            )
            history += [Turn(speaker="user", text=question), Turn(speaker="agent", text=answer)]
    return [*samples, Sample(question_id="q-alone", question="Where do gamma rays come from?")]


def _project(root, callable_, extra=""):
    (root / "src").mkdir(parents=True)
    (root / "src" / "user_rag.py").write_text(textwrap.dedent(CONVERSATIONAL_RAG))
    rows = [s.model_dump(mode="json", exclude_defaults=True) for s in turn_samples()]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "ragassay.toml").write_text(CONFIG.format(callable=callable_, extra=extra))
    return root


def _outputs(root):
    con = sqlite3.connect(root / "ragassay-results.db")
    try:
        return {q: json.loads(o) for q, o in con.execute("select question_id, output_json from outputs")}
    finally:
        con.close()


# -- python -------------------------------------------------------------------------------------------------------


def test_a_callable_naming_history_gets_each_turns_conversation_and_returns_its_rewrite(tmp_path):
    root = _project(tmp_path, "answer")
    run = ragassay.run(root)
    assert not run.failed and not any("history" in w for w in run.warnings)
    outputs = _outputs(root)
    for sample in turn_samples():
        output = outputs[sample.question_id]
        seen = json.loads(output["answer"])
        assert seen["conversation_id"] == sample.conversation_id and seen["turn"] == sample.turn
        assert seen["history"] == [[t.speaker, t.text] for t in sample.history]
    assert outputs["c1::3"]["query"] == "alpha reactor: Where is it?" and outputs["c2::2"]["query"] == (
        "salmon: In which river?"
    )
    assert seen == {"conversation_id": None, "turn": None, "history": []}  # the single question, last
    assert outputs["c1::1"]["query"] == "Who built the alpha reactor?"


def test_a_callable_that_never_sees_the_history_is_warned_about(tmp_path):
    run = ragassay.run(_project(tmp_path / "single", "single"))
    assert not run.failed
    assert any(
        "3 conversation turn(s) have a history, but user_rag:single takes no 'history'" in w for w in run.warnings
    )
    sampled = ragassay.run(_project(tmp_path / "sample", "with_sample", ", pass_sample = true"))
    assert not any("history" in w for w in sampled.warnings)  # the sample carries the history
    assert _outputs(tmp_path / "sample")["c1::3"]["answer"] == "4"


def test_only_named_keyword_parameters_are_conversation_parameters():
    def old(question): ...
    def loose(question, *args, **kwargs): ...
    def keyword_only(question, *, turn, history=None): ...
    def positional_only(history, /): ...

    assert conversation_parameters(old) == conversation_parameters(loose) == frozenset()
    assert conversation_parameters(keyword_only) == {"turn", "history"}
    assert conversation_parameters(positional_only) == frozenset()
    assert conversation_parameters(len) == frozenset()


# -- http ---------------------------------------------------------------------------------------------------------


def _post_all(samples, **options):
    async def scenario(url):
        rag = HttpRAG(HttpRAG.Options(url=url, retries=0, **options), context=ComponentContext())
        try:
            return await asyncio.gather(*(rag.answer(s) for s in samples), return_exceptions=True)
        finally:
            await rag.aclose()

    def reply(request):
        return Reply(200, {"answer": f"to {request.json.get('question', '?')}", "rewrite": "the rewrite"})

    with JSONServer({("POST", "/rag"): reply}) as server:
        outputs = asyncio.run(scenario(server.url + "/rag"))
        sent = {r.json.get("question", json.dumps(r.json)): r.json for r in server.requests}
    return outputs, sent


def test_http_posts_a_turns_history_conversation_id_and_turn_and_single_questions_as_before():
    samples = turn_samples()
    outputs, sent = _post_all(samples, response={"answer": "answer", "query": "rewrite"})
    assert all(o.answer == f"to {s.question}" and o.query == "the rewrite" for o, s in zip(outputs, samples))
    assert sent["Where is it?"] == {
        "question": "Where is it?",
        "conversation_id": "c1",
        "turn": 3,
        "history": [
            {"speaker": "user", "text": "Who built the alpha reactor?"},
            {"speaker": "agent", "text": "Ada Lovelace Labs"},
            {"speaker": "user", "text": "When?"},
            {"speaker": "agent", "text": "1999"},
        ],
    }
    first = {"question": "Who fished salmon?", "conversation_id": "c2", "turn": 1, "history": []}
    assert sent["Who fished salmon?"] == first
    assert sent["Where do gamma rays come from?"] == {"question": "Where do gamma rays come from?"}


def test_http_template_placing_the_history_itself_and_conversation_false():
    samples = turn_samples()
    template = {"question": "{question}", "chat": {"messages": "{history}", "n": "{turn}", "tag": "{turn}/{history}"}}
    _, sent = _post_all(samples[1:2], request=template)
    assert sent["When?"] == {
        "question": "When?",
        "chat": {
            "messages": [
                {"speaker": "user", "text": "Who built the alpha reactor?"},
                {"speaker": "agent", "text": "Ada Lovelace Labs"},
            ],
            "n": 2,
            "tag": '2/[{"speaker": "user", "text": "Who built the alpha reactor?"}, {"speaker": "agent", '
            '"text": "Ada Lovelace Labs"}]',
        },
    }
    _, plain = _post_all(samples[1:2], conversation=False)
    assert plain["When?"] == {"question": "When?"}
    failed, _ = _post_all(samples[1:2], request=["{question}"])
    assert isinstance(failed[0], ValueError) and 'place "{history}" in the template' in str(failed[0])


# -- precomputed --------------------------------------------------------------------------------------------------


def _precomputed(tmp_path, name, text):
    (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    rag = PrecomputedRAG(PrecomputedRAG.Options(path=name), context=ComponentContext(project_dir=tmp_path))
    rag.prepare(None)
    return rag


def _answers(rag, samples):
    async def scenario():
        try:
            return await asyncio.gather(*(rag.answer(s) for s in samples), return_exceptions=True)
        finally:
            await rag.aclose()

    return asyncio.run(scenario())


def test_precomputed_rows_are_found_by_conversation_and_turn_or_by_the_turn_id(tmp_path):
    rows = [
        {"conversation_id": "c1", "turn": 1, "answer": "Ada Lovelace Labs"},
        {"question_id": "c1::2", "answer": "1999", "query": "alpha reactor: When?"},
        {"question_id": "c1::3", "conversation_id": "c1", "turn": 3, "answer": "Oslo"},
        {"conversation_id": "c2", "turn": 2, "answer": "the Beta river"},
        {"question_id": "q-alone", "answer": "the sun"},
    ]
    rag = _precomputed(tmp_path, "out.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    samples = turn_samples()
    found = dict(zip((s.question_id for s in samples), _answers(rag, samples)))
    assert {q: o.answer for q, o in found.items() if not isinstance(o, Exception)} == {
        "c1::1": "Ada Lovelace Labs",
        "c1::2": "1999",
        "c1::3": "Oslo",
        "c2::2": "the Beta river",
        "q-alone": "the sun",
    }
    assert found["c1::2"].query == "alpha reactor: When?" and found["c1::1"].query is None
    assert isinstance(found["c2::1"], LookupError) and "no precomputed output for question_id 'c2::1'" in str(
        found["c2::1"]
    )


def test_precomputed_csv_turns_and_rows_that_disagree_or_lack_a_turn(tmp_path):
    csv_rows = """
    question_id,conversation_id,turn,answer
    ,c1,2,1999
    q-alone,,,the sun
    """
    rag = _precomputed(tmp_path, "out.csv", csv_rows)
    samples = [s for s in turn_samples() if s.question_id in ("c1::2", "q-alone")]
    assert [o.answer for o in _answers(rag, samples)] == ["1999", "the sun"]
    wrong = {"question_id": "c1::2", "conversation_id": "c1", "turn": 3, "answer": "x"}
    with pytest.raises(DatasetError, match=r"line 1: question_id 'c1::2' does not match conversation_id and turn "):
        _precomputed(tmp_path, "wrong.jsonl", json.dumps(wrong))
    for bad in ({"conversation_id": "c1", "answer": "x"}, {"conversation_id": "c1", "turn": 0, "answer": "x"}):
        with pytest.raises(DatasetError, match="needs both conversation_id and turn"):
            _precomputed(tmp_path, "bad.jsonl", json.dumps(bad))
