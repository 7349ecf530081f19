"""The watches a results store holds (``ragassay watch``: one run per project and watch name, with its stored
progress), read as plain data for the live page of ``ragassay serve`` (:func:`read_watches`, :func:`read_watch`).

A watch run is a run whose resolved spec has a ``watch`` entry (the rules in effect); its progress is the JSON the
watch commits with each batch (:class:`ragassay.store.protocols.WatchStore`: the detectors' states, the references,
the judge spend per minute, the alarms, the judge drift notes, the metrics' history per time bin). A store without
watch tables (another backend) holds no watch.

The rules are read without the OTLP headers and endpoint and without the sinks (a webhook URL or a header may carry
a credential), so nothing that shows a watch can show those.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

HIDDEN_RULES = ("otlp", "otlp_headers", "sinks")  # may carry credentials: never read for display


@dataclasses.dataclass(frozen=True)
class WatchRecord:
    """One watch as stored: its run, its rules (:data:`HIDDEN_RULES` left out), its progress (``state``: the
    parsed JSON, empty before its first commit) and, from :func:`read_watch`, how many traces it decided on per
    status (``counts``: scored, unscored (for budget), unmapped, skipped, failed, reference)."""

    run_id: str
    name: str
    project: str
    created_at: float
    columns: tuple[str, ...]  # the watched metric labels, then ``judge:LABEL`` per judge
    rules: dict[str, Any]
    state: dict[str, Any]
    counts: dict[str, int] | None = None
    problem: str | None = None  # why the stored progress could not be read (then ``state`` is empty)

    @property
    def alarms(self) -> list[dict[str, Any]]:
        """The stored alarm records, in the order raised."""
        return list(self.state.get("alarms") or [])


def read_watches(store: Any) -> list[WatchRecord]:
    """Every watch of ``store`` (a :class:`ragassay.store.protocols.ResultsReader` that is also a
    :class:`~ragassay.store.protocols.WatchStore`), the newest run first, with its progress but no counts; only the
    newest run of each (project, watch name) (the one a restarted watch resumes)."""
    if not hasattr(store, "watch_state"):
        return []
    found, seen = [], set()
    for row in store.list_runs():
        spec = _watch_spec(row)
        if spec is None:
            continue
        record = _record(row, spec, store.watch_state(row["id"]))
        if (record.project, record.name) not in seen:
            seen.add((record.project, record.name))
            found.append(record)
    return found


def read_watch(store: Any, ref: str) -> WatchRecord | None:
    """The watch named ``ref`` (a watch name, else its run's id or a unique id prefix) with its counts; None when
    no watch answers to it. A name two projects share picks the newest run; its run id picks either."""
    watches = read_watches(store)
    named = [w for w in watches if w.name == ref]
    chosen = named[0] if named else None
    if chosen is None:
        by_id = [w for w in watches if w.run_id.startswith(ref)]
        chosen = by_id[0] if len(by_id) == 1 else None
    if chosen is None:
        return None
    return dataclasses.replace(chosen, counts=dict(store.watch_counts(chosen.run_id)))


def _watch_spec(row: dict[str, Any]) -> dict[str, Any] | None:
    """The run's spec when it is a watch's (its ``watch`` entry present), else None."""
    raw = row.get("spec_json") or ""
    if '"watch"' not in raw:
        return None
    try:
        spec = json.loads(raw)
    except ValueError:
        return None
    return spec if isinstance(spec, dict) and isinstance(spec.get("watch"), dict) else None


def _record(row: dict[str, Any], spec: dict[str, Any], state_json: str | None) -> WatchRecord:
    rules = {k: v for k, v in spec["watch"].items() if k not in HIDDEN_RULES}
    columns = [*spec.get("metrics", {}), *(f"judge:{label}" for label in spec.get("judges", {}))]
    state, problem = {}, None
    try:
        state = json.loads(state_json) if state_json else {}
    except ValueError as exc:
        problem = f"the watch's stored progress is not JSON ({exc})"
    if not isinstance(state, dict):
        state, problem = {}, f"the watch's stored progress is a JSON {type(state).__name__}, not an object"
    return WatchRecord(
        run_id=row["id"],
        name=str(rules.get("name") or "watch"),
        project=row["project"],
        created_at=row["created_at"],
        columns=tuple(columns),
        rules=rules,
        state=state,
        problem=problem,
    )
