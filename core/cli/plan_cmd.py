"""``ragassay plan``: how small a difference a run can detect, and how many samples an effect needs
(ragassay.analysis.power; docs/statistics.md)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .ppi_view import labelled_options
from .render import Column, Table, emit, number_text

FIELDS = ("n", "sd", "alpha", "power", "mde", "mde_method", "effect", "needed", "needed_method", "reason")
CLUSTER_FIELDS = ("n_clusters", "unit_sd", "needed_clusters")  # turns of conversations (docs/statistics.md)


@click.command("plan")
@click.argument("run", required=False)
@config_option
@db_option
@click.option("--effect", type=float, default=None, help="A difference worth detecting: how many samples it needs.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Two-sided test level.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Wanted chance of detecting it.")
@click.option("--baseline", default=None, metavar="SYSTEM", help="Compare with SYSTEM (default: the first system).")
@click.option("--metric", "metrics", multiple=True, metavar="NAME", help="Only this metric (repeatable).")
@click.option(
    "--bonferroni", is_flag=True, help="Divide alpha by the number of comparisons (metrics x systems compared)."
)
@labelled_options
@click.option(
    "--width",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="With --labelled: the interval half-width wanted, on the rubric's scale (default: the difference "
    "measured now, which an interval that narrow settles).",
)
@format_option
def plan_command(
    run: str | None,
    config_path: Path,
    db: str | None,
    effect: float | None,
    alpha: float,
    power: float,
    baseline: str | None,
    metrics: tuple[str, ...],
    bonferroni: bool,
    fmt: str | None,
    labelled: tuple[str, ...] = (),
    labels_path: Path | None = None,
    width: float | None = None,
) -> None:
    """Statistical power of RUN (id or unique prefix; default: the newest run).

    For each metric and each system against the baseline, on the samples both scored: n, the SD of the
    per-sample differences and the minimum detectable effect (MDE); with --effect, the samples that difference
    needs. A run with one system gets the figures for comparing a future system on new samples. With --labelled
    METRIC=RUBRIC: how many people's labels would settle each comparison (prediction-powered, from the agreement
    of the labels so far), beside what the labels alone would need.
    """
    from ..analysis.planning import plan_of
    from ..analysis.power import PowerSettings, check_settings
    from .breakdown_cmd import _load

    fmt = output_format(fmt)
    if labelled:
        _plan_labels(run, config_path, db, labelled, labels_path, baseline, width, alpha, fmt)
        return
    settings = PowerSettings(alpha, power, effect)
    check_settings(settings)
    result = plan_of(_load(run, config_path, db), settings, baseline, list(metrics), bonferroni)
    emit(console(), [plan_table(result)], fmt, data=plan_data(result) if fmt == "json" else None)


def _plan_labels(run, config_path, db, labelled, labels_path, baseline, width, alpha, fmt) -> None:
    """``plan --labelled``: the labels each comparison needs (:func:`ragassay.analysis.ppi_plan.plan_labels`)."""
    import dataclasses

    from ..analysis.ppi_plan import plan_labels
    from ..analysis.ppi_verdicts import turns_note
    from ..store.locate import pick_run
    from .common import open_results, read_runs
    from .ppi_view import labelled_specs, people_labels

    entries = labelled_specs(labelled)
    store = open_results(config_path, db, (run,) if run else ())
    try:
        data = read_runs(store, [run if run else pick_run(store)["id"]], payloads=True)[0]
        labels, used = people_labels([(store, data)], entries, labels_path)
    finally:
        store.close()
    source = used.source
    rows = plan_labels(data, labels, entries, baseline=baseline, half_width=width, confidence=1 - alpha, source=source)
    records = [dataclasses.asdict(r) | used.counts(data.id, r.rubric) for r in rows]
    keys = list(records[0]) if records else []
    columns = [Column(k, numeric=k not in LABEL_NAMES, in_text=False) for k in keys]
    columns += [
        Column(k, header=h, numeric=k not in LABEL_NAMES, in_data=False, show=show) for k, h, show in LABEL_TEXT
    ]
    note = (
        f"labels needed: the fewest labels for which the prediction-powered interval ({1 - alpha:.0%}) is at most "
        "half_width either side (PPI++ with the measured spreads and correlation of labels and metric); labels only: "
        "the labels alone; '-': more than the run's samples. Labels from " + source + "."
    )
    notes = [note, *used.lines(), *(f"warning: {n}" for n in turns_note(data))]
    emit(console(), [Table(f"run {data.id[:8]}: labels to settle each comparison", columns, records, notes)], fmt)


LABEL_NAMES = ("metric", "rubric", "baseline", "system", "reason")
LABEL_TEXT = (
    ("metric", None, lambda r: str(r["metric"])),
    ("system", None, lambda r: str(r["system"])),
    ("labelled", "labelled now", lambda r: f"{r['labelled']} of {r['samples']}"),
    ("correlation", "corr.", lambda r: number_text(r["correlation"], 2)),
    ("half_width", "± width", lambda r: number_text(r["half_width"])),
    ("needed", "labels needed", lambda r: number_text(r["needed"]) if r["needed"] else "-"),
    (
        "needed_labels_only",
        "labels alone",
        lambda r: number_text(r["needed_labels_only"]) if r["needed_labels_only"] else "-",
    ),
    ("reason", None, lambda r: str(r["reason"])),
)


def plan_data(result) -> dict:
    """The plan as the documented JSON object."""
    s = result.settings
    return {
        "run": result.run_id,
        "baseline": result.baseline,
        "design": "paired" if result.paired else "unpaired",
        "alpha": s.alpha,
        "comparisons": s.comparisons,
        "alpha_per_comparison": s.level,
        "power": s.power,
        "effect": s.effect,
        "rows": _rows(result),
        "summary": result.summary,
    }


def _rows(result) -> list[dict]:
    return [
        {"metric": r.estimate.metric, "system": r.system, "baseline": r.baseline, **_fields(r)} for r in result.rows
    ]


def _fields(row) -> dict:
    estimate = row.estimate.as_dict()
    keys = FIELDS + (CLUSTER_FIELDS if estimate["n_clusters"] is not None else ())
    return {key: estimate[key] for key in keys}


def plan_table(result) -> Table:
    """The plan as one table: metric, system, n, SD, MDE (and samples for the effect), with a legend."""
    settings, paired = result.settings, result.paired
    columns = [
        Column("metric"),
        Column("system", header="system" if paired else "system (alone)"),
        Column("baseline", in_text=False),
        Column("n", numeric=True, show=_n_cell),
        Column("sd", header="SD of diff." if paired else "SD", numeric=True),
        Column("mde", header="MDE", numeric=True, show=_mde_cell),
    ]
    if settings.effect is not None:
        columns.append(Column("needed", header=f"samples for {settings.effect:g}", numeric=True, show=_needed_cell))
    columns += [Column(key, in_text=False) for key in ("alpha", "power", "effect", "mde_method", "needed_method")]
    columns.append(Column("reason", in_text=False))
    title = f"run {result.run_id[:8]}: power " + (
        f"against {result.baseline}" if paired and result.rows else "of one system (unpaired)"
    )
    notes = [*legend(result), result.summary]
    return Table(title, columns, _rows(result), notes, id_columns=("metric", "system"))


def _n_cell(row: dict) -> str:
    from ..analysis.clustered import turns_in

    return turns_in(row["n"], row.get("n_clusters"))


def _mde_cell(row: dict) -> str:
    if row["mde"] is not None:
        return f"{row['mde']:.3f}"
    return "no variation" if row["sd"] == 0 else "too few"


def _needed_cell(row: dict) -> str:
    if row["needed"] is None:
        return "-"
    if row.get("needed_clusters") is not None:
        have = " (have)" if row["needed_clusters"] <= row["n_clusters"] else ""
        return f"{row['needed_clusters']} conversations{have}"
    return f"{row['needed']}" + (" (have)" if row["needed"] <= row["n"] else "")


def legend(result) -> list[str]:
    """What the columns mean, the test they assume, and why a row has no figure."""
    settings, paired = result.settings, result.paired
    level = f"alpha {settings.alpha:g}" + (
        f" / {settings.comparisons} comparisons = {settings.level:.4g} (Bonferroni)" if settings.comparisons > 1 else ""
    )
    notes = [
        f"MDE (minimum detectable effect): differences smaller than this are unlikely to be detected with the row's "
        f"n samples (two-sided t test at {level}, power {settings.power:g}; exact noncentral-t figures below 1000 "
        "samples). Smaller is better.",
    ]
    if paired:
        baseline = result.baseline or "-"
        notes.append(
            f"n: samples both the system and {baseline} scored; SD of diff.: standard deviation of the per-sample "
            f"differences (system - {baseline})."
        )
    else:
        notes.append(
            "one system: figures for comparing a future system scored on different samples (n each); scoring both "
            "on the same samples (paired) usually needs fewer."
        )
    if settings.effect is not None:
        unit = "paired samples" if paired else "samples per system"
        notes.append(
            f"samples for {settings.effect:g}: {unit} needed to detect a difference of {settings.effect:g}"
            " with the same test; (have): the run already has that many."
        )
    unplanned: dict[str, list[str]] = {}
    for row in result.rows:
        if row.estimate.reason:
            unplanned.setdefault(row.estimate.reason, []).append(f"{row.estimate.metric} ({row.system})")
    notes += [f"{reason}: {', '.join(where)}." for reason, where in unplanned.items()]
    return notes


COMMANDS = [plan_command]
