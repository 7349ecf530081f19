"""One conversation of a run as plain data, for ``ragassay show --conversation`` and ``ragassay serve``'s
conversation page; and the run's conversations as a listing.

:func:`conversation_detail` gives, turn by turn (in turn order): the user's question, its answerability label and
references, and per system the retrieval query it sent (``RAGOutput.query``, its rewrite; None: the question
itself), the retrieved contexts (those among the turn's reference ids marked), the answer, the metric values, the
claims of its answer with their support (this turn's context, an earlier turn, or none: from the details of the
per-turn faithfulness metrics, ``details["claims"]``), the turn's blame where a ``turn_blame`` metric stored one,
and whether it is where the conversation first failed (:mod:`ragassay.analysis.conversations_failures`). The
turns before the first evaluated one (the conversation's opening, not scored) come first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

CONTEXT_CHARS = 600  # each context's text is cut to this many characters
SUPPORT = ("context", "history", "none")  # a claim's support (docs/conversations.md)


def conversation_positions(run, conversation_id: str) -> list[int]:
    """The positions of the conversation's turns in ``run``, in turn order; a ConfigError naming some of the
    run's conversations when it has no such one."""
    from ..analysis.conversations import conversation_turns
    from ..errors import ConfigError

    turns = conversation_turns(run)
    if conversation_id in turns:
        return turns[conversation_id]
    if not turns:
        raise ConfigError(f"run {run.id[:12]} has no conversation: none of its samples is a conversation turn")
    known = ", ".join(list(turns)[:10]) + (", ..." if len(turns) > 10 else "")
    raise ConfigError(f"run {run.id[:12]} has no conversation {conversation_id!r}; it has: {known}")


def conversation_detail(run, conversation_id: str, payloads: dict, systems: list[str] | None = None, rule=None):
    """The conversation ``conversation_id`` of ``run`` (:class:`ragassay.results.RunData`) as a dict (see the
    module docstring): ``payloads`` are its turns' stored outputs by (system, question_id)
    (:func:`ragassay.results.read_payloads`); ``systems`` (default: all) are checked against the run's; ``rule``
    (:func:`ragassay.analysis.conversations_failures.failure_rule`) says where it first failed."""
    from ..analysis.conversations_failures import first_failures

    systems = check_systems(run, systems)
    positions = conversation_positions(run, conversation_id)
    scores = _scores(run, positions)
    firsts = {}
    if rule is not None:
        firsts = {f.system: f for f in first_failures(run, rule, systems) if f.conversation_id == conversation_id}
    turns = []
    for i in positions:
        sample = run.samples[i]
        entries = [
            _system_turn(run, system, sample, payloads.get((system, sample.question_id)), scores, firsts.get(system))
            for system in systems
        ]
        turns.append(_turn(sample, entries))
    first = run.samples[positions[0]]
    return {
        "conversation_id": conversation_id,
        "run": run.id,
        "systems": systems,
        "opening": [{"speaker": t.speaker, "text": t.text} for t in first.history],
        "turns": turns,
        "rule": rule.describe() if rule is not None else None,
        "first_failures": {s: _failure(firsts.get(s)) for s in systems} if rule is not None else {},
    }


def check_systems(run, systems: list[str] | None) -> list[str]:
    """``systems`` (default: every system of the run, in its order), each checked to be one of the run's."""
    from ..errors import ConfigError

    if not systems:
        return list(run.systems)
    unknown = [s for s in systems if s not in run.systems]
    if unknown:
        raise ConfigError(f"system {unknown[0]!r} is not in this run; it has: {', '.join(run.systems)}")
    return list(dict.fromkeys(systems))


def _scores(run, positions: list[int]) -> dict[tuple[str, str], list]:
    """(system, question_id) -> the repeat-0 scores of the conversation's turns, in stored order."""
    table = run.score_table
    mask = np.isin(table.sample, positions) & (table.repeat == 0)
    found: dict[tuple[str, str], list] = {}
    for record in table.rows(mask):
        found.setdefault((record.system, record.question_id), []).append(record)
    return found


def _turn(sample, systems: list[dict]) -> dict[str, Any]:
    return {
        "turn": sample.turn,
        "question_id": sample.question_id,
        "question": sample.question,
        "answerability": sample.answerability,
        "reference_answers": list(sample.reference_answers),
        "reference_context_ids": list(sample.reference_context_ids),
        "systems": systems,
    }


def _system_turn(run, system: str, sample, output, scores: dict, first) -> dict[str, Any]:
    row = run.output(system, sample.question_id)
    mine = scores.get((system, sample.question_id), [])
    return {
        "system": system,
        "status": row.status if row is not None else "missing",
        "error": (row.error or "") if row is not None else "no stored output",
        "query": output.query if output is not None else None,
        "answer": output.answer if output is not None else "",
        "contexts": _contexts(sample, output),
        "metrics": [_metric(s) for s in mine],
        "claims": claims_of(mine),
        "blame": _blame(mine),
        "first_failure": first is not None and first.question_id == sample.question_id,
    }


def _contexts(sample, output) -> list[dict[str, Any]]:
    if output is None:
        return []
    references = set(sample.reference_context_ids)
    ids = output.context_ids or [""] * len(output.contexts)
    documents = output.context_document_ids or [""] * len(output.contexts)
    return [
        {
            "id": cid,
            "document": doc,
            "reference": bool(cid and cid in references) or bool(doc and doc in references),
            "text": text[:CONTEXT_CHARS] + ("..." if len(text) > CONTEXT_CHARS else ""),
        }
        for text, cid, doc in zip(output.contexts, ids, documents)
    ]


def _metric(score) -> dict[str, Any]:
    return {"name": score.column, "value": score.value, "reason": score.unscored_reason or score.explanation or ""}


def claims_of(scores: list) -> dict[str, Any] | None:
    """The claims of the first score whose details hold claims with a ``support`` (the per-turn faithfulness
    metrics store them), as ``{"metric", "claims": [{"text", "support", "turn", "context", "explanation"}]}``."""
    for score in scores:
        details = score.details if score.kind == "metric" else {}
        claims = details.get("claims") if isinstance(details, dict) else None
        if isinstance(claims, list) and claims and all(isinstance(c, dict) and "support" in c for c in claims):
            return {"metric": score.column, "claims": [_claim(c) for c in claims]}
    return None


def _claim(claim: dict) -> dict[str, Any]:
    support = str(claim.get("support"))
    return {
        "text": str(claim.get("text", "")),
        "support": support,
        "tone": {"context": "good", "history": "warn"}.get(support, "bad"),
        "turn": claim.get("turn"),
        "context": claim.get("context"),
        "explanation": str(claim.get("explanation") or ""),
    }


def _blame(scores: list) -> dict[str, Any] | None:
    """The blame a ``turn_blame`` value stored (details ``blame``), or None."""
    for score in scores:
        details = score.details if score.kind == "metric" else {}
        if isinstance(details, dict) and "blame" in details and score.value is not None:
            return {"metric": score.column, "blame": str(details["blame"]), "reason": str(details.get("reason") or "")}
    return None


def _failure(first) -> dict[str, Any] | None:
    if first is None or first.turn is None:
        return None
    return {"turn": first.turn, "question_id": first.question_id, "blame": first.blame, "reason": first.reason}


def conversation_listing(run, rule=None) -> list[dict[str, Any]]:
    """One row per conversation and system of ``run``: its turns (and answerability labels), where it first
    failed by ``rule`` (None: no rule, so no failure column) with the blame and reason."""
    from ..analysis.conversations import conversation_turns
    from ..analysis.conversations_failures import first_failures

    turns = conversation_turns(run)
    firsts = {(f.system, f.conversation_id): f for f in first_failures(run, rule)} if rule is not None else {}
    rows = []
    for cid, positions in turns.items():
        labels = sorted({run.samples[i].answerability for i in positions if run.samples[i].answerability})
        for system in run.systems:
            first = firsts.get((system, cid))
            rows.append(
                {
                    "conversation": cid,
                    "system": system,
                    "turns": len(positions),
                    "answerability": ", ".join(labels),
                    "first_failure": first.turn if first is not None else None,
                    "blame": (first.blame or "") if first is not None and first.turn is not None else "",
                    "reason": first.reason if first is not None else "",
                }
            )
    return rows
