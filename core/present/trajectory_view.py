"""One output's trajectory as plain data, for ``ragassay show RUN SAMPLE --trajectory`` and ``ragassay serve``'s
sample page: a timeline of its steps with the sample's gold per hop.

:func:`trajectory_timeline` gives, step by step in order: its 1-based position, id, kind, name and nesting depth
(a nested agent's steps sit one level below the agent step that is their ``parent_id``); what it did, as
(label, text) lines (a retrieval's query, a tool call's arguments and result, a model call's prompt and reply,
the answer, an error), each cut to :data:`TEXT_CHARS` characters; the retrieved ids with their documents, each
marked with the hops whose gold it is (``Sample.hops``) and whether it is one of the sample's reference ids; its
tokens and latency; and whether it is the step a step-blame metric blamed (details ``step``, else
``step_index``). Then the hops (gold, and where a per-hop metric stored them, whether some retrieval found them
and which step), and the blame itself.
"""

from __future__ import annotations

import json
from typing import Any

TEXT_CHARS = 300  # each text of a step is cut to this many characters


def trajectory_timeline(run, sample, output, scored: dict[str, tuple[float | None, dict]]) -> dict[str, Any] | None:
    """The timeline of ``output`` (a :class:`ragassay.models.RAGOutput`; None or without a trajectory: None) for
    ``sample``; ``scored`` maps a metric label to its repeat-0 (value, details) for this output, from which the
    run's step-blame and per-hop metrics (:mod:`ragassay.analysis.trajectories_failures`) are read."""
    from ..analysis.trajectories_failures import blame_columns, hop_column

    if output is None or not output.trajectory:
        return None
    blame = _blame(blame_columns(run), scored)
    hop_label = hop_column(run)
    hop_details = scored.get(hop_label, (None, {}))[1] if hop_label else {}
    steps = output.trajectory
    depths = _depths(steps)
    gold = {}  # id -> the hops whose gold it is
    for hop in sample.hops:
        for ref in hop.reference_context_ids:
            gold.setdefault(ref, []).append(hop.index)
    references = set(sample.reference_context_ids)
    shown = [_step(i, step, depths[i], gold, references, _is_blamed(blame, step, i)) for i, step in enumerate(steps)]
    tokens = sum(s["tokens"] or 0 for s in shown)
    return {
        "steps": shown,
        "hops": _hops(sample, hop_details),
        "hop_metric": hop_label if hop_details else None,
        "blame": blame,
        "tokens": tokens,
        "latency_s": output.latency_s,
    }


def _depths(steps) -> list[int]:
    """Each step's nesting depth: 0 at the top, one more than its parent agent's (unknown parents: top level)."""
    parents = {step.id: step.parent_id for step in steps}

    def depth(step_id: str | None, seen: set) -> int:
        parent = parents.get(step_id) if step_id is not None else None
        if parent is None or parent not in parents or parent in seen:
            return 0
        return 1 + depth(parent, seen | {parent})

    return [depth(step.id, {step.id}) for step in steps]


def _blame(columns: list[str], scored: dict) -> dict[str, Any] | None:
    """The blame the first step-blame column stored for this output (exact before judge), or None."""
    for label in columns:
        value, details = scored.get(label, (None, {}))
        if value is not None and isinstance(details, dict) and "blame" in details:
            keys = ("blame", "step", "step_index", "kind", "hop", "reason")
            return {"metric": label, "value": value, **{k: details.get(k) for k in keys}}
    return None


def _is_blamed(blame: dict | None, step, index: int) -> bool:
    if blame is None or blame["blame"] == "ok":
        return False
    if blame["step"] is not None:
        return blame["step"] == step.id
    return blame["step_index"] == index


def _step(index: int, step, depth: int, gold: dict, references: set, blamed: bool) -> dict[str, Any]:
    documents = step.document_ids or [""] * len(step.context_ids)
    contexts = [
        {
            "id": cid,
            "document": doc,
            "hops": sorted(set(gold.get(cid, []) + gold.get(doc, []))),
            "reference": cid in references or doc in references,
        }
        for cid, doc in zip(step.context_ids, documents)
    ]
    usage = step.usage
    return {
        "index": index + 1,
        "id": step.id,
        "kind": step.kind,
        "name": step.name,
        "parent_id": step.parent_id,
        "depth": depth,
        "lines": _lines(step),
        "contexts": contexts,
        "tokens": usage.input_tokens + usage.output_tokens if usage is not None else None,
        "latency_s": step.latency_s,
        "error": step.error,
        "blamed": blamed,
    }


def _lines(step) -> list[tuple[str, str]]:
    """What the step did, as (label, text) pairs, in the order they happened."""
    found = []
    if step.query is not None:
        found.append(("query", step.query))
    if step.arguments is not None:
        found.append(("arguments", compact(step.arguments)))
    if step.kind == "model_call" and step.input is not None:
        found.append(("input", step.input))
    if step.result is not None:
        found.append(("result", compact(step.result)))
    if step.output is not None:
        found.append(("answer" if step.kind == "answer" else "output", step.output))
    if step.error is not None:
        found.append(("error", step.error))
    return [(label, cut(text)) for label, text in found]


def compact(value: Any) -> str:
    """A JSON value on one line (strings as they are)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def cut(text: str, width: int = TEXT_CHARS) -> str:
    """``text`` on one line, cut to ``width`` characters (an ellipsis marks the cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _hops(sample, details: dict) -> list[dict[str, Any]]:
    """The sample's hops with their gold; found and the finding step where a per-hop metric stored them."""
    stored = {h.get("index"): h for h in (details or {}).get("hops") or [] if isinstance(h, dict)}
    found = []
    for hop in sample.hops:
        mine = stored.get(hop.index, {})
        found.append(
            {
                "index": hop.index,
                "description": hop.description,
                "question": hop.question,
                "gold": list(hop.reference_context_ids),
                "found": mine.get("found"),
                "step": mine.get("step"),
            }
        )
    return found


def step_rows(system: str, timeline: dict) -> list[dict[str, Any]]:
    """One flat row per step of ``timeline`` (``--format csv|markdown``): the retrieved ids with their gold hops
    as ``id [hop 1]``, the lines as ``label: text`` joined by `` | ``."""
    rows = []
    for step in timeline["steps"]:
        marks = [c["id"] + (f" [hop {','.join(map(str, c['hops']))}]" if c["hops"] else "") for c in step["contexts"]]
        rows.append(
            {
                "system": system,
                "step": step["index"],
                "id": step["id"],
                "depth": step["depth"],
                "kind": step["kind"],
                "name": step["name"],
                "detail": " | ".join(f"{label}: {text}" for label, text in step["lines"]),
                "retrieved": ", ".join(marks),
                "tokens": step["tokens"],
                "latency_s": step["latency_s"],
                "blamed": step["blamed"],
            }
        )
    return rows


def add_timelines(run, sample, entry: dict[str, Any], payloads: dict, scores: list) -> dict[str, Any]:
    """``entry`` (:func:`ragassay.present.sections.browser.sample_entry` of ``sample``) with the sample's hops and,
    per system, its ``trajectory`` timeline (None: none); ``payloads`` are the sample's stored outputs by (system,
    question_id), ``scores`` its repeat-0 score records."""
    entry["hops"] = [
        {"index": h.index, "description": h.description, "gold": list(h.reference_context_ids)} for h in sample.hops
    ]
    for system_entry in entry["systems"]:
        system = system_entry["system"]
        scored = {s.column: (s.value, s.details) for s in scores if s.system == system and s.kind == "metric"}
        output = payloads.get((system, sample.question_id))
        system_entry["trajectory"] = trajectory_timeline(run, sample, output, scored)
    return entry
