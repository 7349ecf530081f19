"""The run-to-run spread tables shown after the comparison when a run has repeats (ragassay.analysis.variance)."""

from __future__ import annotations

from .render import Column, Table


def variance_tables(store, run_ids: list[str], against: str | None = None) -> list[Table]:
    """Per run with repeats: one row per system and repeated metric (mean, min-max, sd over repeats, n) and,
    against ``against`` (default: the run's first system), whether each difference exceeds the spread."""
    from ..analysis.variance import separation, spreads

    tables = []
    for run_id in run_ids:
        found = spreads(store.repeat_rows(run_id))
        if not found:
            continue
        systems = [s["name"] for s in store.run_systems(run_id)]
        reference = against if against in systems else systems[0]
        rows = []
        for (system, label), s in sorted(found.items(), key=lambda item: (item[0][1], systems.index(item[0][0]))):
            other = found.get((reference, label))
            versus = separation(other, s) if other is not None and system != reference else None
            rows.append(
                {
                    "metric": label,
                    "system": system,
                    "repeats": s.repeats,
                    "n": s.n,
                    "mean": s.mean,
                    "min": s.low,
                    "max": s.high,
                    "sd": s.sd,
                    "difference": versus.difference if versus else None,
                    "exceeds spread": versus.exceeds if versus else None,
                }
            )
        columns = [
            Column("metric"),
            Column("system"),
            Column("repeats", numeric=True),
            Column("n", numeric=True),
            Column("mean", numeric=True, show=lambda r: _number(r["mean"])),
            Column("min-max", show=lambda r: f"{_number(r['min'])}-{_number(r['max'])}", in_data=False),
            Column("min", numeric=True, in_text=False),
            Column("max", numeric=True, in_text=False),
            Column("sd", numeric=True, show=lambda r: _number(r["sd"])),
            Column(f"vs {reference}", show=_versus, in_data=False),
            Column("difference", numeric=True, in_text=False),
            Column("exceeds spread", in_text=False),
        ]
        legend = (
            "run-to-run spread of each repeated metric: mean of the per-repeat means over the samples scored in "
            "every repeat (n), their min-max and standard deviation; vs: difference of the means to "
            f"{reference}, 'exceeds' when the two min-max ranges do not overlap, 'within spread' otherwise"
        )
        tables.append(Table(f"run {run_id[:8]}: run-to-run variance", columns, rows, [legend]))
    return tables


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _versus(row: dict) -> str:
    if row["difference"] is None:
        return ""
    return f"{row['difference']:+.3f} " + ("exceeds" if row["exceeds spread"] else "within spread")
