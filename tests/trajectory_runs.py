"""A run of agents' trajectories written straight into a real SQLite results store, every value chosen by the test:
six samples (three multi-hop questions, one without hops, two turns of conversation ``c1``), answered by a
single-shot RAG ("single", no trajectory), a decomposing agent ("decompose": plan, one retrieval per hop, answer)
and an iterative agent ("iterate": retrieve, decide, ...; a nested agent and tool calls), with the per-hop
coverage, step blame and judge blame stored in the formats of docs/agents.md (FORMATS of issue 40).

The planted values (tokens = input + output of the output's usage; latency in seconds; the gold of each hop is
one document; ``-``: the output failed):

=======  ======  ==============  ================  ================  ======================================
sample   hops    single          decompose         iterate           blame single / decompose / iterate
=======  ======  ==============  ================  ================  ======================================
q1       d1 d2   120 1.0 all     300 2.0 all       400 3.0 all       ok / ok / ok
q2       d3 d4   120 1.0 miss 2  320 2.5 miss 2    380 3.5 miss 2    missed_hop 2 / missed_hop 2 / tool_error
q3       d5-d7   130 1.2 miss 3  450 3.0 all       600 4.5 miss 3    missed_hop 3 / ok / loop (hop 3)
q4       (d8)    110 0.8         200 1.5 (steps)   250 2.0           judge: ok / ok / unsupported_answer
c1::1    d9 d10  120 1.0 miss 2  300 2.0 all       420 3.0 all       missed_hop 2 / ok / ok
c1::2    d11 d12 120 1.0 all     310 2.2 miss 1    -                 ok / missed_hop 1 / -
=======  ======  ==============  ================  ================  ======================================

decompose's output for q4 reports no usage: its tokens are its steps' (80 + 120). Steps per trajectory:
decompose 5, 5, 6, 4, 5, 5 (2 model calls, a retrieval per hop, an answer); iterate 7, 4, 7, 3, 3 (q1: retrieval,
decide, a nested agent "searcher" holding a retrieval and a tool call, answer call, answer; q2: retrieval, decide,
a tool call that failed, answer; q3: three retrievals the last repeating the second, three calls, answer).
"""

from __future__ import annotations

import json
from pathlib import Path

from ragassay.models import Hop, MetricValue, RAGOutput, Sample, Step, TokenUsage, Turn
from ragassay.store import open_store, store_url
from ragassay.store.units import UnitResult

RUN_ID = "trajectory-run-0001"
PLANT = "<script>alert(1)</script>"
MARKUP = "[bold]Where[/bold]"  # rich markup in a tool's arguments: must show as text
SYSTEMS = ("single", "decompose", "iterate")
QUESTIONS = {  # question id -> (question, hops' gold documents)
    "q1": ("Which country is the client of project Apollo in?", [["d1"], ["d2"]]),
    "q2": ("Who manages the client of project Birch?", [["d3"], ["d4"]]),
    "q3": ("Which city hosts the office of the client of project Cedar?", [["d5"], ["d6"], ["d7"]]),
    "q4": ("When was project Dune started?", []),
    "c1::1": ("Which client runs project Elm?", [["d9"], ["d10"]]),
    "c1::2": ("And its country?", [["d11"], ["d12"]]),
}
TOKENS = {
    "single": [120, 120, 130, 110, 120, 120],
    "decompose": [300, 320, 450, 200, 300, 310],
    "iterate": [400, 380, 600, 250, 420, None],
}
LATENCY = {
    "single": [1.0, 1.0, 1.2, 0.8, 1.0, 1.0],
    "decompose": [2.0, 2.5, 3.0, 1.5, 2.0, 2.2],
    "iterate": [3.0, 3.5, 4.5, 2.0, 3.0, None],
}
SINGLE_CONTEXTS = {  # what the single-shot system retrieved (one retrieval step)
    "q1": ["d1", "d2"],
    "q2": ["d3", "x"],
    "q3": ["d5", "d6"],
    "q4": ["d8", "x"],
    "c1::1": ["d9", "x"],
    "c1::2": ["d11", "d12"],
}
DECOMPOSE_RETRIEVED = {  # per hop, the documents decompose's retrieval for that hop found
    "q1": [["d1", "x"], ["d2"]],
    "q2": [["d3"], ["x"]],
    "q3": [["d5"], ["d6"], ["d7"]],
    "q4": [["d8"]],
    "c1::1": [["d9"], ["d10"]],
    "c1::2": [["x"], ["d12"]],
}
BLAMES = {  # (blame, step id, step index, kind, hop); q4 is judged (step_blame_judge), the others exact
    "single": {
        "q1": ("ok", None, None, None, None),
        "q2": ("missed_hop", None, None, "retrieval", 2),
        "q3": ("missed_hop", None, None, "retrieval", 3),
        "q4": ("ok", None, None, None, None),
        "c1::1": ("missed_hop", None, None, "retrieval", 2),
        "c1::2": ("ok", None, None, None, None),
    },
    "decompose": {
        "q1": ("ok", None, None, None, None),
        "q2": ("missed_hop", "s3", 2, "retrieval", 2),
        "q3": ("ok", None, None, None, None),
        "q4": ("ok", None, None, None, None),
        "c1::1": ("ok", None, None, None, None),
        "c1::2": ("missed_hop", "s2", 1, "retrieval", 1),
    },
    "iterate": {
        "q1": ("ok", None, None, None, None),
        "q2": ("tool_error", "s3", 2, "tool_call", 2),
        "q3": ("loop", "s5", 4, "retrieval", 3),
        "q4": ("unsupported_answer", "s3", 2, "answer", None),
        "c1::1": ("ok", None, None, None, None),
    },
}
SPEC = {
    "metrics": {
        "coverage": {"name": "hop_coverage", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
        "blame": {"name": "step_blame", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
        "blame_judge": {"name": "step_blame_judge", "traits": {"direction": "higher", "value_range": [0.0, 1.0]}},
    },
    "judges": {},
}


def samples() -> list[Sample]:
    """The run's samples, in order: q1, q2, q3, q4, c1::1, c1::2."""
    found = []
    for qid, (question, gold) in QUESTIONS.items():
        hops = [Hop(index=i, description=f"hop {i} of {qid}", reference_context_ids=g) for i, g in enumerate(gold, 1)]
        refs = [d for g in gold for d in g] or ["d8"]
        turn = {}
        if qid.startswith("c1::"):
            number = int(qid[-1])
            history = [] if number == 1 else [Turn(speaker="user", text=QUESTIONS["c1::1"][0])]
            history += [Turn(speaker="agent", text="Elm Ltd")] if number == 2 else []
            turn = {"conversation_id": "c1", "turn": number, "history": history}
        found.append(
            Sample(question_id=qid, question=question, reference_context_ids=refs, hops=hops, **turn),
        )
    return found


def _usage(tokens: int) -> TokenUsage:
    return TokenUsage(input_tokens=tokens - 20, output_tokens=20, calls=1)


def _retrieval(sid: str, query: str, documents: list[str], parent: str | None = None) -> Step:
    ids = [f"{d}#0" for d in documents]
    scores = [round(1.0 - 0.1 * i, 2) for i in range(len(ids))]
    return Step(
        id=sid, kind="retrieval", parent_id=parent, name="search", query=query, context_ids=ids,
        document_ids=list(documents), scores=scores, latency_s=0.05,
    )  # fmt: skip


def _call(sid: str, name: str, tokens: int, parent: str | None = None) -> Step:
    return Step(
        id=sid, kind="model_call", parent_id=parent, name=name, input=f"prompt of {name}", output=f"reply of {name}",
        usage=_usage(tokens), latency_s=0.4,
    )  # fmt: skip


def _answer(sid: str, text: str) -> Step:
    return Step(id=sid, kind="answer", output=text)


def decompose_trajectory(qid: str, total: int) -> list[Step]:
    """Plan (80 tokens), one retrieval per hop, the answer call (the rest), the answer."""
    steps = [_call("s1", "plan", 80)]
    for hop, documents in enumerate(DECOMPOSE_RETRIEVED[qid], start=1):
        steps.append(_retrieval(f"s{len(steps) + 1}", f"sub-question {hop} of {qid}", documents))
    steps.append(_call(f"s{len(steps) + 1}", "answer", total - 80))
    steps.append(_answer(f"s{len(steps) + 1}", f"decompose answers {qid}"))
    return steps


def iterate_trajectory(qid: str, total: int) -> list[Step]:
    """The iterative agent's steps for ``qid`` (module docstring); model calls sum to ``total`` tokens."""
    if qid == "q1":
        return [
            _retrieval("s1", QUESTIONS[qid][0], ["d1"]),
            _call("s2", "decide", 120),
            Step(id="s3", kind="agent", name="searcher"),
            _retrieval("s4", "client of project Apollo", ["d2"], parent="s3"),
            Step(
                id="s5",
                kind="tool_call",
                parent_id="s3",
                name="lookup",
                arguments={"id": "d2"},
                call_id="call-1",
                result={"name": f"Acme {PLANT}"},
                latency_s=0.2,
            ),  # fmt: skip
            _call("s6", "answer", total - 120),
            _answer("s7", "Acme is in France."),
        ]
    if qid == "q2":
        return [
            _retrieval("s1", QUESTIONS[qid][0], ["d3"]),
            _call("s2", "decide", total),
            Step(id="s3", kind="tool_call", name="sql", arguments={"query": MARKUP}, error="timeout after 30 s"),
            _answer("s4", "I could not find the manager."),
        ]
    if qid == "q3":
        return [
            _retrieval("s1", QUESTIONS[qid][0], ["d5"]),
            _call("s2", "decide", 200),
            _retrieval("s3", "office of the client", ["d6"]),
            _call("s4", "decide", 200),
            _retrieval("s5", "office of the client", ["d6"]),
            _call("s6", "answer", total - 400),
            _answer("s7", "Paris."),
        ]
    documents = ["d8"] if qid == "q4" else ["d9", "d10"]
    return [_retrieval("s1", QUESTIONS[qid][0], documents), _call("s2", "answer", total), _answer("s3", "Soon.")]


def write_trajectory_run(path: Path):
    """Write the run into a SQLite store at ``path``; return (store, run id)."""
    store = open_store(store_url(str(path), path.parent))
    written = samples()
    row = {"id": RUN_ID, "fingerprint": RUN_ID, "project": "agents", "config_path": "x", "config_json": "{}"}
    row |= {"spec_json": json.dumps(SPEC), "ragassay_version": "0", "sample_count": len(written)}
    store.create_run(row, [(name, "{}") for name in SYSTEMS], written)
    store.write_units(RUN_ID, [_unit(system, i, s) for system in SYSTEMS for i, s in enumerate(written)])
    store.finish_run(RUN_ID, "complete", [])
    return store, RUN_ID


def _unit(system: str, index: int, sample: Sample) -> UnitResult:
    qid, tokens, latency = sample.question_id, TOKENS[system][index], LATENCY[system][index]
    if tokens is None:
        return UnitResult(system, qid, "failed", None, error="planted failure")
    if system == "single":
        documents, trajectory = SINGLE_CONTEXTS[qid], []
        retrieved = [documents]
    else:
        build = decompose_trajectory if system == "decompose" else iterate_trajectory
        trajectory = build(qid, tokens)
        retrieved = [s.document_ids for s in trajectory if s.kind == "retrieval"]
        documents = list(dict.fromkeys(d for found in retrieved for d in found))
    usage = TokenUsage() if (system, qid) == ("decompose", "q4") else _usage(tokens)
    output = RAGOutput(
        answer=f"{system} answers {qid}",
        contexts=[f"Text of {d}." for d in documents],
        context_ids=[f"{d}#0" for d in documents],
        context_document_ids=documents,
        usage=usage,
        latency_s=latency,
        trajectory=trajectory,
    )
    steps = [s.id for s in trajectory if s.kind == "retrieval"] or [None]
    return UnitResult(system, qid, "ok", output, metrics=_metrics(system, sample, retrieved, steps))


def _metrics(system: str, sample: Sample, retrieved: list[list[str]], steps: list) -> list[MetricValue]:
    blame, step, step_index, kind, hop = BLAMES[system][sample.question_id]
    details = {"blame": blame, "step": step, "step_index": step_index, "kind": kind, "hop": hop}
    details["reason"] = f"{blame} at {step or 'no step'}"
    value = 1.0 if blame == "ok" else 0.0
    if not sample.hops:
        unscored = MetricValue(metric="coverage", value=None, unscored_reason="no hops")
        return [unscored, MetricValue(metric="blame_judge", value=value, details=details)]
    hops = [_hop(h, retrieved, steps) for h in sample.hops]
    failed = next((h["index"] for h in hops if not h["found"]), None)
    coverage = sum(h["found"] for h in hops) / len(hops)
    return [
        MetricValue(metric="coverage", value=coverage, details={"hops": hops, "first_failed_hop": failed}),
        MetricValue(metric="blame", value=value, details=details),
    ]


def _hop(hop: Hop, retrieved: list[list[str]], steps: list) -> dict:
    """The per-hop details of the hop metrics: the best retrieval step against this hop's gold."""
    gold = set(hop.reference_context_ids)
    best = max(range(len(retrieved)), key=lambda i: len(gold & set(retrieved[i])))
    found = retrieved[best]
    hits = [d in gold for d in found]
    rank = hits.index(True) + 1 if any(hits) else None
    return {
        "index": hop.index,
        "description": hop.description,
        "gold": sorted(gold),
        "found": any(hits),
        "recall": sum(hits) / len(gold),
        "precision": sum(hits) / len(found) if found else 0.0,
        "rr": 1.0 / rank if rank else 0.0,
        "step": steps[best] if any(hits) else None,
    }
