"""The ``compare --against`` table: paired differences with bootstrap intervals (ragassay.analysis.paired)."""

from __future__ import annotations

from ..errors import StoreError
from .render import Column, Table

PARTS = ("diff", "ci_low", "ci_high", "significant", "wins", "ties", "losses", "n")


def paired_table(store, run_id: str, against: str) -> Table:
    """For every other system of the run and every column: mean(B - A) [95% CI], wins/ties/losses, n."""
    from ..analysis.comparison import per_sample_values
    from ..analysis.paired import paired_difference

    systems = [s["name"] for s in store.run_systems(run_id)]
    if against not in systems:
        raise StoreError(f"run {run_id[:12]} has no system '{against}'. Its systems: {', '.join(systems)}")
    values = per_sample_values(store, run_id)
    metrics = list(dict.fromkeys(column for (_, column) in values))
    columns = [Column("system")]
    for metric in metrics:
        columns.append(Column(metric, numeric=True, show=lambda r, m=metric: _cell(r, m), in_data=False))
        columns += [Column(f"{metric} {part}", numeric=True, in_text=False) for part in PARTS]
    rows = []
    for system in systems:
        if system == against:
            continue
        row = {"system": system}
        for metric in metrics:
            result = paired_difference(metric, values.get((against, metric), {}), values.get((system, metric), {}))
            row.update(
                {
                    f"{metric} {part}": value
                    for part, value in zip(
                        PARTS,
                        (
                            result.mean_diff,
                            result.ci_low,
                            result.ci_high,
                            result.significant,
                            result.wins,
                            result.ties,
                            result.losses,
                            result.n,
                        ),
                    )
                }
            )
        rows.append(row)
    legend = (
        f"cells: mean(system - {against}) [95% bootstrap interval], * = the interval excludes 0; "
        f"W/T/L = samples where the system scores higher/the same/lower than {against}; n = paired samples"
    )
    return Table(f"run {run_id[:8]}: paired difference to {against}", columns, rows, [legend])


def _cell(row: dict, metric: str) -> str:
    diff, low, high = (row[f"{metric} {part}"] for part in ("diff", "ci_low", "ci_high"))
    if diff is None:
        return "-"
    wins, ties, losses, n = (row[f"{metric} {part}"] for part in ("wins", "ties", "losses", "n"))
    star = "*" if row[f"{metric} significant"] else ""
    return f"{diff:+.3f} [{low:+.3f}, {high:+.3f}]{star} {wins}/{ties}/{losses} n={n}"
