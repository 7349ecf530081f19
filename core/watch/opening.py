"""Opening a watch session: the watch run (one per project and watch name, resumed), the reference of each watched
column (a stored run's values, a window of stored traces scored now, or a fixed target) and its detector (restored
from the stored progress, or new); a column whose component changed since the last session goes through
:mod:`ragassay.watch.recalibration` instead of alarming on the change."""

from __future__ import annotations

import json
from typing import Any

from ..errors import ConfigError
from ..models import JUDGEMENT_COLUMNS, METRIC_COLUMNS


def open_run(session: Any) -> tuple[str, bool]:
    """(run id, resumed): the newest run with the watch's fingerprint, else a new one with no samples."""
    plan, store = session.plan, session.store
    fingerprint = plan.fingerprint()
    existing = store.find_run(fingerprint)
    if existing is not None:
        store.set_run_spec(existing["id"], json.dumps(plan.spec()))
        return existing["id"], True
    run_id = plan.create_run(store, fingerprint, plan.spec(), [], f"ragassay watch '{plan.rules.name}'")
    return run_id, False


async def start_detectors(session: Any) -> None:
    """References and detectors, restored or set now; changed components recalibrated (drift)."""
    from .recalibration import recalibrate

    state, plan = session.state, session.plan
    identities = plan.identities()
    before = state.get("identities") or {}
    changed = sorted(c for c in identities if c in before and before[c] != identities[c])
    references = state.get("references")
    if references is None:
        references = await _references_for(session, plan.columns())
    new = [c for c in identities if c not in references]
    if new:  # a column added to the rules since the last session
        references.update(await _references_for(session, new))
    states = {c: s for c, s in (state.get("detectors") or {}).items() if c in identities}
    state["references"] = references
    session.monitors.start(references, states)
    if changed:
        await recalibrate(session, changed, before)
    state["identities"] = identities


async def _references_for(session: Any, columns: list[str]) -> dict[str, float]:
    reference = session.rules.reference
    where = session.plan.loaded.where("watch.reference")
    if reference is None:
        raise ConfigError(
            f'{where}: the watch needs a reference, e.g. reference = {{ run = "RUN" }}, '
            '{ since = "2025-03-01", until = "2025-03-08" } or { target = { METRIC = 0.9 }, margin = 0.05 } '
            "(or --reference-run / --target METRIC=VALUE)"
        )
    if reference.kind == "target":
        unknown = sorted(set(reference.target) - set(session.plan.columns()))
        if unknown:
            raise ConfigError(
                f"{where}.target: {', '.join(unknown)} not watched; watched: {', '.join(session.plan.columns())}"
            )
        missing = [c for c in columns if c not in reference.target]
        if missing:
            raise ConfigError(f"{where}.target: no target for {', '.join(missing)}; give one per watched metric")
        return {c: float(reference.target[c]) for c in columns}
    values = run_values(session, reference) if reference.kind == "run" else await window_values(session)
    empty = [c for c in columns if not values.get(c)]
    if empty:
        source = f"run {reference.run}" if reference.kind == "run" else f"the traces from {reference.since}"
        raise ConfigError(f"{where}: {source} has no scored value of {', '.join(empty)} to take a reference from")
    return {c: float(session.statistics.reference_of(values[c])) for c in columns}


def run_values(session: Any, reference: Any) -> dict[str, list[float]]:
    """column -> the scored values (repeat 0) of the reference run's system."""
    store = session.store
    run = store.get_run(reference.run)
    systems = [row["name"] for row in store.run_systems(run["id"])]
    system = reference.system or (systems[0] if systems else None)
    if system not in systems:
        raise ConfigError(f"watch.reference.system: run {run['id']} has no system '{system}'; its systems: {systems}")
    found: dict[str, list[float]] = {}
    for kind, columns, label_at, value_at in (
        ("metric", METRIC_COLUMNS, "metric", "value"),
        ("judge", JUDGEMENT_COLUMNS, "judge", "score"),
    ):
        index = {name: i for i, name in enumerate(columns)}
        for row in store.score_records(run["id"], kind):
            if row[index["system"]] != system or row[index["repeat"]] != 0 or row[index[value_at]] is None:
                continue
            label = row[index[label_at]]
            found.setdefault(label if kind == "metric" else f"judge:{label}", []).append(float(row[index[value_at]]))
    return found


async def window_values(session: Any) -> dict[str, list[float]]:
    """column -> values of the stored traces of the reference window, scored now into the watch run (status
    ``reference``), batch by batch; a resumed session reads those it scored before from the store."""
    from ..traces.reading import scan_traces

    reference, rules = session.rules.reference, session.rules
    where = {**rules.where, "since": reference.since, **({"until": reference.until} if reference.until else {})}
    found: dict[str, list[float]] = {}
    batch: list[Any] = []

    async def flush() -> None:
        for kept in await session.decide(batch, status="reference"):
            for column, value in kept.values.items():
                found.setdefault(column, []).append(value)
        batch.clear()

    for trace in scan_traces(session.store, where=where, sample=rules.sample, mapping=session.plan.mapping):
        batch.append(trace)
        if len(batch) >= rules.batch:
            await flush()
    if batch:
        await flush()
    return found
