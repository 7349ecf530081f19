"""``compare --labelled METRIC=RUBRIC --sequential``: the anytime-valid prediction-powered decisions
(:mod:`ragassay.analysis.ppi_sequential`) as a table and in words, each beside the fixed-n PPI interval of the
same comparison. Rendering only."""

from __future__ import annotations

from ..text import counted
from .render import Column, Table

KEYS = (
    "run", "metric", "rubric", "kind", "baseline", "system", "seed", "n", "labelled", "design", "pi_min", "lam",
    "bound", "level", "estimate", "ci_low", "ci_high", "decision", "settled_at", "labels_at", "ppi_estimate",
    "ppi_low", "ppi_high", "ppi_level", "reason",
)  # fmt: skip
TEXT = ("metric", "system")
LEGEND = (
    "anytime-valid: a confidence sequence of the terms lam f + (labelled / pi) (y - lam f), lam = 1, over the "
    "paired samples in the run's seeded processing order, checked after every sample (Waudby-Smith & Ramdas 2024); "
    "it holds the people's mean difference at every sample count at once, so a stop at its first exclusion of 0 is "
    "valid, and so is a look after every labelling session that labels on in this order with probabilities set "
    "beforehand. pi: each label's own (active queue), or n / N "
    "(random-order labels: a uniform subset). settled: the sample count (labels among them) where it first "
    "excluded 0. fixed-n PPI: the interval of compare --labelled (PPI++, Holm level), valid at one look only."
)


def _interval(row: dict, mean: str, low: str, high: str) -> str:
    if row.get(low) is None:
        return "-"
    return f"{row[mean]:+.3f} [{row[low]:+.3f}, {row[high]:+.3f}]"


def _settled(row: dict) -> str:
    if row.get("decision") is None:
        return row.get("reason") or "-"
    if row["decision"] == "not settled":
        return f"not settled in {row['settled_at']} ({row['labels_at']} labels)"
    return f"{row['decision']} at {row['settled_at']} ({row['labels_at']} labels)"


def rows_of(runs) -> list[dict]:
    """One row per comparison: ``runs`` is a list of (run id, :class:`SequentialPPIPair` list, the run's
    :class:`ragassay.analysis.ppi_verdicts.PPIVerdicts` or None)."""
    rows = []
    for run_id, pairs, fixed in runs:
        by_key = {} if fixed is None else {(p.system, p.metric): p for p in fixed.pairs}
        for pair in pairs:
            row = dict.fromkeys(KEYS) | {"run": run_id, "reason": pair.reason}
            row |= {k: getattr(pair, k) for k in ("metric", "rubric", "kind", "baseline", "system", "seed")}
            if pair.result is not None:
                row |= {k: getattr(pair.result, k) for k in KEYS if hasattr(pair.result, k)}
            ppi = by_key.get((pair.system, pair.metric))
            if ppi is not None and ppi.estimate is not None:
                row |= {"ppi_estimate": ppi.estimate, "ppi_low": ppi.low, "ppi_high": ppi.high, "ppi_level": ppi.level}
            rows.append(row)
    return rows


def ppi_sequential_table(runs) -> Table:
    """Every anytime-valid labelled comparison (json, csv, markdown and rich)."""
    columns = [Column(k, numeric=k not in ("run", *TEXT, "rubric", "kind", "baseline", "design", "decision",
                                           "reason"), in_text=k in TEXT) for k in KEYS]  # fmt: skip
    columns[KEYS.index("estimate") : KEYS.index("estimate")] = [
        Column("cs", header="anytime-valid [CS]", show=lambda r: _interval(r, "estimate", "ci_low", "ci_high"),
               in_data=False),
        Column("settled", header="settled (labels)", show=_settled, in_data=False),
        Column("fixed", header="fixed-n PPI [CI]", show=lambda r: _interval(r, "ppi_estimate", "ppi_low", "ppi_high"),
               in_data=False),
    ]  # fmt: skip
    title = "anytime-valid decisions on people's labels (checking while you label)"
    return Table(title, columns, rows_of(runs), [LEGEND], id_columns=TEXT)


def ppi_sequential_lines(runs) -> list[str]:
    """The anytime-valid block of each run in words."""
    lines = []
    for run_id, pairs, _ in runs:
        level = next((p.result.level for p in pairs if p.result is not None), None)
        each = "" if level is None else f", each at {level:.4g} (Bonferroni over {counted(len(pairs), 'comparison')})"
        seed = pairs[0].seed if pairs else 0
        lines.append(
            f"anytime-valid decisions on people's labels, run {run_id[:8]}: samples in the seeded processing order "
            f"(seed {seed}), lambda 1 fixed in advance{each}"
        )
        for row in rows_of([(run_id, pairs, None)]):
            head = f"  {row['system']} vs {row['baseline']} on {row['metric']} ({row['rubric']})"
            if row["decision"] is None:
                lines.append(f"{head}: {row['reason']}.")
                continue
            pi = "pi = n / N" if row["design"] == "random" else "pi of each label"
            lines.append(
                f"{head}: {_settled(row)} of {row['n']} samples; confidence sequence over every sample "
                f"{_interval(row, 'estimate', 'ci_low', 'ci_high')} ({row['labelled']} labelled, {pi}, smallest "
                f"{row['pi_min']:.3g}, terms within +-{row['bound']:.3g})."
            )
    return lines
