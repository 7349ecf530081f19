"""An alarm as the watch keeps and sends it: a plain record (JSON) built from the detector's alarm, and its one
line of text, which names the metric, the change with its interval, when it started, the version values involved
(the most frequent among the traces since the start first: a deployment is the first suspect) and the worst traces
with the path ``ragassay serve`` shows each at (``/runs/RUN/samples/TRACE``)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import quote

ALARM_FIELDS = (
    "metric",
    "direction",
    "change",
    "low",
    "high",
    "started_at",
    "fired_at",
    "observations",
    "worst_traces",
    "versions",
    "alpha",
    "method",
)
SHOWN_TRACES = 5


def sample_path(run_id: str, trace_id: str) -> str:
    """Where ``ragassay serve`` shows the trace's sample."""
    return f"/runs/{quote(run_id, safe='')}/samples/{quote(trace_id, safe='')}"


def alarm_record(alarm: Any, run_id: str, watch: str, reference: float | None) -> dict[str, Any]:
    """The stored and sent form of a detector's alarm, with the run, its links and its text."""
    record: dict[str, Any] = {field: _plain(getattr(alarm, field, None)) for field in ALARM_FIELDS}
    record["versions"] = suspects(record.get("versions") or {})
    record.update(
        {
            "watch": watch,
            "run": run_id,
            "reference": reference,
            "links": [sample_path(run_id, trace) for trace in record.get("worst_traces") or []],
        }
    )
    record["text"] = alarm_text(record)
    return record


def suspects(versions: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """Each version key's values, the most frequent first (ties: by value), as ordered dicts."""
    return {
        key: dict(sorted(((str(v), int(n)) for v, n in counts.items()), key=lambda item: (-item[1], item[0])))
        for key, counts in versions.items()
    }


def alarm_text(record: dict[str, Any]) -> str:
    """``ALARM [watch] METRIC lower: -0.41 [-0.55, -0.27] ...`` in one line."""
    change = record.get("change")
    interval = f"[{_num(record.get('low'))}, {_num(record.get('high'))}]"
    reference = "" if record.get("reference") is None else f" vs reference {_num(record['reference'], sign=False)}"
    versions = "; ".join(
        f"{key}: " + ", ".join(f"{value} ({n} trace{'s' if n != 1 else ''})" for value, n in counts.items())
        for key, counts in (record.get("versions") or {}).items()
    )
    links = record.get("links") or []
    shown = ", ".join(links[:SHOWN_TRACES]) + (
        f" and {len(links) - SHOWN_TRACES} more" if len(links) > SHOWN_TRACES else ""
    )
    return (
        f"ALARM [{record.get('watch')}] {record.get('metric')} {record.get('direction')}: change {_num(change)} "
        f"{interval}{reference}, started {_when(record.get('started_at'))}, fired {_when(record.get('fired_at'))} "
        f"after {record.get('observations')} observations (alpha {record.get('alpha')}, {_short(record.get('method'))})"
        + (f"; versions: {versions}" if versions else "")
        + (f"; worst traces: {shown}" if shown else "")
    )


def _short(method: Any) -> str:
    """The method's name without its citations (the record's ``method`` keeps them; docs/watch.md explains it)."""
    return str(method or "?").split(" (", 1)[0]


def _num(value: Any, sign: bool = True) -> str:
    if value is None:
        return "?"
    return f"{float(value):+.3f}" if sign else f"{float(value):.3f}"


def _when(value: Any) -> str:
    if value is None:
        return "?"
    moment = dt.datetime.fromtimestamp(float(value), tz=dt.timezone.utc)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _plain(value: Any) -> Any:
    """JSON-ready: tuples as lists, numpy scalars as numbers, nested dicts and lists likewise."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value
