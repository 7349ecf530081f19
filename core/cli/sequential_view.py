"""Rendering a sequential run's outcome (:mod:`ragassay.analysis.sequential_outcome`) in ``compare`` and
``run``: per comparison the sequential decision, its anytime-valid interval and where it settled, then the
projected calls, tokens and money saved against the full run. Rendering only."""

from __future__ import annotations

from ..config.sequential import NOT_SETTLED, OPEN
from ..text import counted
from .render import Column, Table

NOT_VALID = (
    "fixed-n verdicts are not shown for this run: it stopped sequentially, and a fixed-n interval on the samples "
    "it stopped at is not valid; the decisions are the anytime-valid ones above (docs/statistics.md, Stopping early)"
)


def sequential_lines(outcome) -> list[str]:
    """The sequential block of one run, as plain lines."""
    settings = outcome.settings
    head = (
        f"sequential decisions, run {outcome.run_id[:8]}: against {outcome.baseline} (baseline), alpha "
        f"{settings.get('alpha', 0.05):g} over {counted(len(outcome.rows), 'comparison')} (Bonferroni), batch "
        f"{settings.get('batch')}, seed {outcome.seed}, samples in the seeded order; checked {outcome.checked} of "
        f"{outcome.samples} samples" + ("" if outcome.complete else " (not finished: run again to go on)")
    )
    lines = [head]
    for row in outcome.rows:
        mean = "-" if row.mean_gain is None else f"{row.mean_gain:+.3f}"
        lines.append(
            f"  {row.system} vs {row.baseline} on {row.metric}: {where_decided(row)}; "
            f"mean gain {mean}, {(1 - row.level) * 100:.4g}% confidence sequence "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}] (n = {row.n} paired{_unit(row)})"
        )
    lines.append("  " + saved_line(outcome))
    return lines


def _unit(row) -> str:
    """ " conversations" when the sequential unit was the conversation (its mean gain weighs conversations)."""
    return " conversations" if getattr(row, "unit", "sample") == "conversation" else ""


def where_decided(row) -> str:
    """``better, settled at 20 samples``, ``not settled at the maximum of 30 samples`` or ``open, still open after
    40 samples``: a comparison that reached the maximum is never called settled."""
    if row.decision == NOT_SETTLED:
        return f"not settled at the maximum of {counted(row.settled_at, 'sample')}"
    if row.decision == OPEN:
        return f"open, still open after {counted(row.settled_at, 'sample')}"
    return f"{row.decision}, settled at {counted(row.settled_at, 'sample')}"


def saved_line(outcome) -> str:
    """``saved against the full run (projected): N calls, T tokens, $X`` with the samples processed per system."""
    processed = ", ".join(f"{s.system} {s.processed}/{s.samples}" for s in outcome.savings)
    usd = outcome.usd_saved
    money = "cost unknown (a model has no price)" if usd is None else f"${usd:.4f}"
    return (
        f"saved against the full run (projected: per-sample mean spent x samples not processed): "
        f"{outcome.calls_saved:,.0f} calls, {outcome.tokens_saved:,.0f} tokens, {money}; samples processed: "
        f"{processed}"
    )


def sequential_table(comparison) -> Table:
    """Every sequential comparison of every sequential run (json, csv and markdown)."""
    names = ("baseline", "system", "metric", "decision")
    numbers = ("settled_at", "n", "mean_gain", "ci_low", "ci_high", "level")
    columns = [Column("run", in_text=False)] + [Column(n) for n in names] + [Column(n, numeric=True) for n in numbers]
    rows = [
        {"run": part.run_id} | {key: getattr(row, key) for key in (*names, *numbers)}
        for part in comparison.runs
        if part.sequential is not None
        for row in part.sequential.rows
    ]
    notes = [
        saved_line(part.sequential) + f" (run {part.run_id[:8]})"
        for part in comparison.runs
        if part.sequential is not None
    ]
    return Table("sequential decisions: anytime-valid, each system against the baseline", columns, rows, notes)


FIXED_N = ("ci_low", "ci_high", "level", "p_value", "p_holm", "effect_size", "mde")  # not valid after a stop


def replace_verdict(part, pair: dict) -> dict:
    """A verdicts-table row of a sequentially stopped run: the sequential decision in place of the fixed-n one, and
    no fixed-n interval, p-value, effect size or MDE (None: not valid on the samples the run stopped at)."""
    outcome = part.sequential
    if outcome is None or not outcome.stopped:
        return pair
    row = outcome.row(pair["system"], pair["metric"])
    if row is None:
        verdict = "not decided"
        reason = "the run stopped sequentially and this pair is not in its decision family: no fixed-n verdict is valid"
    else:
        verdict = f"sequential: {row.decision}"
        reason = (
            f"stopped sequentially ({where_decided(row)}): the fixed-n interval is not valid here; anytime-valid "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}] at level {row.level:g}"
        )
    return pair | dict.fromkeys(FIXED_N) | {"verdict": verdict, "reason": reason}
