"""Judge drift: a watched column whose component changed since the last session (another judge model, prompt or
option: the digest of its resolved spec differs) is not compared with what the old one measured. The new component
is run on a calibration slice, the last ``[watch] calibration`` traces the old one scored, stored as a run of its
own (``ragassay watch '<name>' calibration``: every value a normal stored value); the column's detector restarts
(:meth:`Detector.restart`) against the new component's mean on that slice (``reference_of``), or against its fixed
target when the reference is a target, and the session says so instead of alarming on the change."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .scoring import column_values, score_samples
from .source import mapped, trace_sample


async def recalibrate(session: Any, changed: list[str], before: dict[str, str]) -> None:
    """Re-run the changed columns on the calibration slice, restart their detectors, record and say it."""
    store, plan, rules = session.store, session.plan, session.rules
    slice_ids = [
        trace_id for trace_id, _ in store.watch_traces(session.report.run_id, "scored", last=rules.calibration)
    ]
    traces = [t for t in mapped(store, slice_ids, plan.mapping).values() if hasattr(t, "question")]
    values: dict[str, list[float]] = {}
    calibration_run = None
    if traces:
        calibration_run, results = await _calibration_run(session, changed, traces)
        for result in results:
            for column, value in column_values(result).items():
                values.setdefault(column, []).append(value)
    for column in changed:
        note = _restart(session, column, values.get(column) or [])
        note.update({"before": before[column], "after": plan.identities()[column], "run": calibration_run})
        session.state.setdefault("drift", []).append(note)
        session.report.notes.append(note["text"])
        session.say(note["text"])


async def _calibration_run(session: Any, changed: list[str], traces: list[Any]) -> tuple[str, list[Any]]:
    """Score ``traces`` with the changed columns only, into a run of their own; (run id, unit results)."""
    store, plan = session.store, session.plan
    samples = [trace_sample(t) for t in traces]
    identities = {c: plan.identities()[c] for c in changed}
    fingerprint = hashlib.sha256(json.dumps([plan.fingerprint(), identities], sort_keys=True).encode()).hexdigest()
    spec = plan.spec()
    spec["metrics"] = {k: v for k, v in spec["metrics"].items() if k in changed}
    spec["judges"] = {k: v for k, v in spec["judges"].items() if f"judge:{k}" in changed}
    description = f"ragassay watch '{plan.rules.name}' calibration of {', '.join(changed)}"
    run_id = plan.create_run(store, fingerprint, spec, samples, description)
    ledger = session.spend.ledger(session.clock(), session.write_context.prices)
    processor = plan.processor(only=set(changed))
    results = await score_samples(processor, plan.system, session.system_key, samples, ledger, 1)
    if ledger is not None:
        spent = ledger.spent()
        session.spend.add(session.clock(), int(spent["calls"]), float(spent["usd"]))
    store.write_units(run_id, results, session.write_context)
    store.finish_run(run_id, "complete", [])
    return run_id, results


def _restart(session: Any, column: str, values: list[float]) -> dict[str, Any]:
    """Restart ``column``'s detector: against the new values' reference, or the target, or (no values) the
    reference it had; the note that says which."""
    reference = session.rules.reference
    old = session.state["references"].get(column)
    if reference is not None and reference.kind == "target":
        new, why = old, "its fixed target"
    elif values:
        new, why = float(session.statistics.reference_of(values)), f"the new one's mean on {len(values)} traces"
    else:
        new, why = old, "the reference it had (no scored trace to calibrate on yet)"
    session.state["references"][column] = new
    session.monitors.restart(column, new)
    text = (
        f"judge drift: {column} changed since the last session; re-ran it on the last {len(values)} scored "
        f"trace(s) (calibration slice of at most {session.rules.calibration}) and restarted its detector against "
        f"{why} ({new:.4f}, was {old if old is None else round(old, 4)}) instead of alarming on the change"
    )
    return {"column": column, "reference_before": old, "reference_after": new, "slice": len(values), "text": text}
