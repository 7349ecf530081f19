"""Export the claims and checks of a stored run in RAGChecker's output layout, for RAGChecker's own tools.

::

    python -m ragassay.plugins.claims.export RUN OUT.json [--results DB] [--system NAME] [--metric claim_checks]

For each sample of one system, the checks are read from the details of the claim metric (label ``claim_checks``
by default; it stores ``ClaimChecks.model_dump(mode="json")`` under ``details["checks"]``,
:func:`~ragassay.plugins.claims.model.checks_from_details`), else from the output's ``trace["ragchecker"]`` (a
replayed RAGChecker file). Each result gets the per-result ``metrics`` RAGChecker's code computes from those
checks and the file the overall block under RAGChecker's keys (``overall_metrics``, ``retriever_metrics``,
``generator_metrics``; ``readings`` default: RAGChecker's code, zeros where it gives zeros), so the file reads as
if RAGChecker had written it: its ``RAGResults.from_json`` loads it and its ``evaluate`` gives the same block.
``gt_answer`` is the sample's first reference answer. Samples without checks (a failed output, an unscored claim
metric) are left out and listed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import formulas
from .model import ClaimChecks, checks_from_details
from .ragchecker_format import result_of

#: RAGChecker's own code: exclusive noise sensitivity, any-chunk faithfulness, its zero fallbacks.
RAGCHECKER_READINGS = formulas.RAGCHECKER_CODE


def export_run(
    data: Any, *, system: str | None = None, metric: str = "claim_checks", readings: formulas.Readings | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(RAGChecker output document, notes on left-out samples) for ``system`` of ``data`` (a run read with
    payloads: ``ragassay.open_run(...).data(payloads=True)``).

    :raises ValueError: no system of the run has checks, or several do and ``system`` is not given, or stored
        checks are invalid (the message names the system and question id).
    """
    readings = readings or RAGCHECKER_READINGS
    system = _pick_system(data, system, metric)
    stored = _stored_checks(data, system, metric)
    results, notes, scores = [], [], []
    for sample in data.samples:
        qid = sample.question_id
        output = data.payload(system, qid) if data.status(system, qid) == "ok" else None
        checks = stored.get(qid) or (_trace_checks(output, system, qid) if output is not None else None)
        if output is None or checks is None:
            notes.append(f"{qid}: {'no ok output' if output is None else 'no claims and checks stored'}")
            continue
        if len(output.contexts) != checks.chunk_count:
            notes.append(f"{qid}: {checks.chunk_count} checked chunks but {len(output.contexts)} stored contexts")
            continue
        per_result = formulas.compute_all(checks, readings)
        scores.append(per_result)
        values = {name: score.value for name, score in per_result.items() if score.value is not None}
        gt_answer = sample.reference_answers[0] if sample.reference_answers else ""
        results.append(result_of(qid, sample.question, gt_answer, output.answer, output.contexts, checks, values))
    block = formulas.ragchecker_block(scores)
    block = {group: {k: v for k, v in values.items() if v is not None} for group, values in block.items()}
    return {"results": results, "metrics": block}, notes


def _pick_system(data: Any, system: str | None, metric: str) -> str:
    if system is not None:
        if system not in data.systems:
            raise ValueError(f"run {data.id[:12]} has no system '{system}' (systems: {', '.join(data.systems)})")
        return system
    with_checks = [s for s in data.systems if _stored_checks(data, s, metric) or _any_trace(data, s)]
    if len(with_checks) == 1:
        return with_checks[0]
    if not with_checks:
        raise ValueError(
            f"run {data.id[:12]}: no system has claims and checks (metric '{metric}' or a replayed RAGChecker file)"
        )
    raise ValueError(f"run {data.id[:12]}: several systems have checks ({', '.join(with_checks)}); name one: --system")


def _stored_checks(data: Any, system: str, metric: str) -> dict[str, ClaimChecks]:
    found = {}
    for record in data.records(kind="metric", label=metric, repeat=0):
        if record.system != system:
            continue
        try:
            checks = checks_from_details(record.details)
        except ValueError as exc:
            raise ValueError(f"system '{system}', question '{record.question_id}': stored checks: {exc}") from None
        if checks is not None:
            found[record.question_id] = checks
    return found


def _trace_checks(output: Any, system: str, qid: str) -> ClaimChecks | None:
    raw = output.trace.get("ragchecker")
    if raw is None:
        return None
    try:
        return ClaimChecks.model_validate(raw)
    except ValueError as exc:
        raise ValueError(f"system '{system}', question '{qid}': trace['ragchecker']: {exc}") from None


def _any_trace(data: Any, system: str) -> bool:
    for qid in data.question_ids:
        output = data.payload(system, qid)
        if output is not None and "ragchecker" in output.trace:
            return True
    return False


def main(argv: list[str] | None = None) -> int:
    """The command line: write the export, print what was left out; exit 1 on an error."""
    parser = argparse.ArgumentParser(
        prog="python -m ragassay.plugins.claims.export",
        description="Write a stored run's claims and checks in RAGChecker's output layout.",
    )
    parser.add_argument("run", help="Run id or unique prefix.")
    parser.add_argument("out", help="Output JSON file.")
    parser.add_argument("--results", help="Results database (SQLite path or SQLAlchemy URL); default: the project's.")
    parser.add_argument("--config", default=".", help="Project config or folder (when --results is not given).")
    parser.add_argument("--system", help="System to export (needed when several have checks).")
    parser.add_argument("--metric", default="claim_checks", help="Label of the metric that stores the checks.")
    args = parser.parse_args(argv)
    import ragassay

    try:
        data = ragassay.open_run(args.run, config=args.config, db=args.results).data(payloads=True)
        document, notes = export_run(data, system=args.system, metric=args.metric)
    except (ValueError, ragassay.RagassayError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    Path(args.out).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(document['results'])} result(s)", file=sys.stderr)
    for note in notes:
        print(f"left out {note}", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
