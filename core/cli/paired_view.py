"""The ``compare --against`` table: paired differences with bootstrap intervals (ragassay.analysis.paired)."""

from __future__ import annotations

from ..errors import StoreError


def print_paired(out, store, run_id: str, against: str) -> None:
    """For every other system of the run and every column: mean(B - A) [95% CI], wins/ties/losses, n."""
    from rich.markup import escape
    from rich.table import Table

    from ..analysis.paired import paired_difference
    from ..analysis.comparison import per_sample_values

    systems = [s["name"] for s in store.run_systems(run_id)]
    if against not in systems:
        raise StoreError(f"run {run_id[:12]} has no system '{against}'. Its systems: {', '.join(systems)}")
    values = per_sample_values(store, run_id)
    columns = list(dict.fromkeys(column for (_, column) in values))
    table = Table(title=f"run {run_id[:8]}: paired difference to {against} (mean B - A [95% bootstrap CI]; "
                        "W/T/L; n). * = interval excludes 0")
    table.add_column("system")
    for column in columns:
        table.add_column(column, justify="right")
    for system in systems:
        if system == against:
            continue
        cells = []
        for column in columns:
            result = paired_difference(column, values.get((against, column), {}), values.get((system, column), {}))
            cells.append("-" if result.mean_diff is None else
                         f"{result.mean_diff:+.3f} [{result.ci_low:+.3f}, {result.ci_high:+.3f}]"
                         f"{'*' if result.significant else ''} {result.wins}/{result.ties}/{result.losses} n={result.n}")
        table.add_row(escape(system), *cells)
    out.print(table)
