"""What the store holds about judges' calibration (:func:`read_calibration`): the judge identities that judged an
item people labelled, and the records ``ragassay judges check`` stored with its runs (``spec["judge_check"]``).
``compare`` and ``gate`` read it to warn about a deciding judge that was never calibrated or whose last check
flagged a drop (:func:`ragassay.analysis.judge_drift.calibration_warnings`)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..models import JUDGEMENT_COLUMNS, METRIC_COLUMNS


@dataclasses.dataclass(frozen=True)
class Calibration:
    """``calibrated``: judge identities that scored a labelled item (a judge's ``judge_id``, or an LLM metric's
    ``judge`` detail); ``checks``: the stored judges-check records, oldest first."""

    calibrated: set[str]
    checks: list[dict[str, Any]]


def read_calibration(store: Any) -> Calibration:
    """Every run of ``store`` read for its check record and, when people labelled some of its outputs, for the
    identities that judged those outputs (a targeted read of the labelled samples' scores)."""
    calibrated: set[str] = set()
    checks: list[dict[str, Any]] = []
    for run in store.list_runs():
        record = (json.loads(run.get("spec_json") or "{}") or {}).get("judge_check")
        if record:
            checks.append(record)
            calibrated |= {record["identity"], *record.get("before", ())}
        items = {(x.system, x.sample_id) for x in store.labels(run["id"]) if getattr(x, "system", None)}
        if items:
            calibrated |= _identities(store, run["id"], items)
    return Calibration(calibrated, sorted(checks, key=lambda r: r.get("checked_at") or 0.0))


def _identities(store: Any, run_id: str, items: set[tuple[str, str]]) -> set[str]:
    questions = sorted({q for _, q in items})
    found: set[str] = set()
    for kind, columns in (("judge", JUDGEMENT_COLUMNS), ("metric", METRIC_COLUMNS)):
        details = columns.index("details_json")
        judge_id = columns.index("judge_id") if "judge_id" in columns else None
        for row in store.score_records(run_id, kind, questions):
            if (row[0], row[1]) not in items:
                continue
            if judge_id is not None and row[judge_id]:
                found.add(str(row[judge_id]))
            elif row[details]:
                ident = (json.loads(row[details]) or {}).get("judge")
                if ident:
                    found.add(str(ident))
    return found
