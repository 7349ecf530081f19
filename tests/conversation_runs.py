"""A conversational run written straight into a real SQLite results store, every value chosen by the test: three
conversations (3, 2 and 3 turns) and one single question, answered by two systems ("last": the last turn as the
query; "rewrite": a rewrite), with a quality metric, answerability behaviour, per-turn blame and per-turn claims
in the formats the conversation metrics store (docs/conversations.md).

The planted values, per conversation and turn (``None``: unscored):

==========  ====  ==============  ======================  =========================  =========================
turn        recall (last, rw)     answerability           behaviour last / rewrite   blame last / rewrite
==========  ====  ==============  ======================  =========================  =========================
c1 turn 1   1.0   1.0             answerable              answer 1 / answer 1        ok / ok
c1 turn 2   0.5   1.0             answerable              answer 1 / answer 1        retrieval / ok
c1 turn 3   0.0   0.5             unanswerable            answer 0 / refuse 1        ok / ok
c2 turn 1   1.0   1.0             answerable              answer 1 / answer 1        ok / ok
c2 turn 2   0.0   1.0             underspecified          answer 0 / clarify 1       generation / ok
c3 turn 1   0.5   1.0             answerable              refuse 0 / answer 1        retrieval / ok
c3 turn 2   0.0   None            unanswerable            refuse 1 / clarify 0       ok / None
c3 turn 3   1.0   1.0             answerable              answer 1 / None            ok / context_loss
single      0.25  0.75            (not a turn)            -                          -
==========  ====  ==============  ======================  =========================  =========================
"""

from __future__ import annotations

import json
from pathlib import Path

from ragassay.models import MetricValue, RAGOutput, Sample, Turn
from ragassay.store import open_store, store_url
from ragassay.store.units import UnitResult

RUN_ID = "conversation-run-0001"
PLANT = "<script>alert(1)</script>"
MARKUP = "[bold]Where[/bold]"  # rich markup in a question: must show as text
SYSTEMS = ("last", "rewrite")
TURNS = [  # (conversation, turn, question, answerability, reference ids)
    ("c1", 1, "Which museum is in Lyon?", "answerable", ["doc-a"]),
    ("c1", 2, f"{MARKUP} is it? {PLANT}", "answerable", ["doc-b"]),
    ("c1", 3, "Who paints there on Sundays?", "unanswerable", []),
    ("c2", 1, "What does the library lend?", "answerable", ["doc-c"]),
    ("c2", 2, "And the other one?", "underspecified", []),
    ("c3", 1, "When did the bridge open?", "answerable", ["doc-d"]),
    ("c3", 2, "Who will repaint it in 2090?", "unanswerable", []),
    ("c3", 3, "How long is it?", "answerable", ["doc-d"]),
]
RECALL = {
    "last": [1.0, 0.5, 0.0, 1.0, 0.0, 0.5, 0.0, 1.0, 0.25],
    "rewrite": [1.0, 1.0, 0.5, 1.0, 1.0, 1.0, None, 1.0, 0.75],
}
BEHAVIOUR = {
    "last": [("answer", 1), ("answer", 1), ("answer", 0), ("answer", 1), ("answer", 0), ("refuse", 0), ("refuse", 1)]
    + [("answer", 1)],
    "rewrite": [("answer", 1), ("answer", 1), ("refuse", 1), ("answer", 1), ("clarify", 1), ("answer", 1)]
    + [("clarify", 0), None],
}
BLAME = {
    "last": ["ok", "retrieval", "ok", "ok", "generation", "retrieval", "ok", "ok"],
    "rewrite": ["ok", "ok", "ok", "ok", "ok", "ok", None, "context_loss"],
}
EXPECTED = {"answerable": "answer", "unanswerable": "refuse", "underspecified": "clarify"}
CLAIMS = [  # the claims of "last"'s answer at c1 turn 2
    {"text": "It opened in 1999", "support": "history", "turn": 1, "context": None, "explanation": "said at turn 1"},
    {"text": "It has three floors", "support": "context", "turn": None, "context": 1, "explanation": "context 1"},
    {"text": f"It sells {PLANT} tickets", "support": "none", "turn": None, "context": None, "explanation": "nowhere"},
]
SPEC = {
    "metrics": {
        "recall": {"name": "recall_at_k", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
        "behaviour": {"name": "answerability_behaviour", "traits": {"direction": "higher", "value_range": [0, 1]}},
        "turn_blame": {"name": "turn_blame", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
        "support": {"name": "turn_context_support", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
    },
    "judges": {},
}


def samples() -> list[Sample]:
    """The run's samples: the eight turns (each with the conversation before it), then the single question."""
    found, history = [], {}
    for cid, turn, question, label, refs in TURNS:
        before = history.setdefault(cid, [Turn(speaker="user", text="hello"), Turn(speaker="agent", text="hi!")])
        found.append(
            Sample(
                question_id=f"{cid}::{turn}",
                question=question,
                conversation_id=cid,
                turn=turn,
                history=list(before),
                answerability=label,
                reference_context_ids=refs,
                reference_answers=[f"answer of {cid} turn {turn}"],
            )
        )
        before += [Turn(speaker="user", text=question), Turn(speaker="agent", text=f"reply {turn}")]
    found.append(Sample(question_id="single", question="A question on its own?", reference_answers=["alone"]))
    return found


def write_conversation_run(path: Path):
    """Write the run into a SQLite store at ``path``; return (store, run id)."""
    store = open_store(store_url(str(path), path.parent))
    written = samples()
    row = {"id": RUN_ID, "fingerprint": RUN_ID, "project": "talks", "config_path": "x", "config_json": "{}"}
    row |= {"spec_json": json.dumps(SPEC), "ragassay_version": "0", "sample_count": len(written)}
    store.create_run(row, [(name, "{}") for name in SYSTEMS], written)
    store.write_units(RUN_ID, [_unit(system, i, s) for system in SYSTEMS for i, s in enumerate(written)])
    store.finish_run(RUN_ID, "complete", [])
    return store, RUN_ID


def _unit(system: str, index: int, sample: Sample) -> UnitResult:
    metrics = [_value("recall", RECALL[system][index])]
    if sample.conversation_id is not None:
        metrics += [_behaviour(system, index, sample), _blame(system, index, sample)]
        if system == "last" and sample.question_id == "c1::2":
            metrics.append(MetricValue(metric="support", value=1 / 3, details={"claims": CLAIMS}))
    query = f"rewritten: {sample.question}" if system == "rewrite" and sample.turn else None
    output = RAGOutput(
        answer=f"{system} answers {sample.question_id}",
        contexts=["Text of A.", "Text of B."],
        context_ids=["doc-a#0", "doc-b#3"],
        context_document_ids=["doc-a", "doc-b"],
        query=query,
    )
    return UnitResult(system, sample.question_id, "ok", output, metrics=metrics)


def _value(label: str, value: float | None, details: dict | None = None) -> MetricValue:
    if value is None:
        return MetricValue(metric=label, value=None, unscored_reason="planted: no value", details=details or {})
    return MetricValue(metric=label, value=value, details=details or {})


def _behaviour(system: str, index: int, sample: Sample) -> MetricValue:
    planted = BEHAVIOUR[system][index]
    if planted is None:
        return _value("behaviour", None)
    behaviour, value = planted
    details = {"behaviour": behaviour, "label": sample.answerability, "expected": EXPECTED[sample.answerability]}
    return _value("behaviour", float(value), details)


def _blame(system: str, index: int, sample: Sample) -> MetricValue:
    blame = BLAME[system][index]
    if blame is None:
        return _value("turn_blame", None)
    details = {"blame": blame, "reason": f"{blame} at turn {sample.turn}", "turn": sample.turn}
    return _value("turn_blame", 1.0 if blame == "ok" else 0.0, details)


def write_bare_turns(path: Path, run_id: str = "bare-turns-0001"):
    """A run of two conversations of two turns, no answerability label, one metric (``recall``), no blame: the
    second turn of ``b`` failed for the one system ``s``. Return (store, run id)."""
    store = open_store(store_url(str(path), path.parent))
    turns = [
        Sample(question_id=f"{c}::{t}", question=f"{c} {t}?", conversation_id=c, turn=t) for c in "ab" for t in (1, 2)
    ]
    spec = {"metrics": {"recall": {"traits": {"direction": "higher", "value_range": [0.0, 1.0]}}}, "judges": {}}
    row = {"id": run_id, "fingerprint": run_id, "project": "bare", "config_path": "x", "config_json": "{}"}
    row |= {"spec_json": json.dumps(spec), "ragassay_version": "0", "sample_count": len(turns)}
    store.create_run(row, [("s", "{}")], turns)
    units = [
        UnitResult("s", s.question_id, "ok", RAGOutput(answer="yes"), metrics=[_value("recall", v)])
        for s, v in zip(turns[:3], (1.0, 0.5, 0.0))
    ]
    units.append(UnitResult("s", turns[3].question_id, "failed", None, error="planted failure"))
    store.write_units(run_id, units)
    store.finish_run(run_id, "complete", [])
    return store, run_id
