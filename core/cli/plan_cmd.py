"""``ragassay plan``: how small a difference a run can detect, and how many samples an effect needs
(ragassay.analysis.power; docs/statistics.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, get_run, open_results, output_format
from .render import Column, Table, emit

FIELDS = ("n", "sd", "alpha", "power", "mde", "mde_method", "effect", "needed", "needed_method", "reason")


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
) -> None:
    """Statistical power of RUN (id or unique prefix; default: the newest run).

    For each metric and each system against the baseline, on the samples both scored: n, the SD of the
    per-sample differences and the minimum detectable effect (MDE); with --effect, the samples that difference
    needs. A run with one system gets the figures for comparing a future system on new samples.
    """
    from ..analysis.power import PowerSettings, check_settings

    fmt = output_format(fmt)
    settings = PowerSettings(alpha, power, effect)
    check_settings(settings)
    store = open_results(config_path, db, (run,) if run else ())
    try:
        run_row = _newest(store) if run is None else get_run(store, run)
        result = plan_run(store, run_row, settings, baseline, list(metrics), bonferroni)
    finally:
        store.close()
    table = plan_table(result)
    emit(console(), [table], fmt, data=result["json"])


def _newest(store) -> dict:
    from ..errors import StoreError

    runs = store.list_runs()
    if not runs:
        raise StoreError("the results database has no run yet. Run 'ragassay run --config PROJECT' first.")
    return store.get_run(runs[0]["id"])


def plan_run(store, run: dict, settings, baseline: str | None, metrics: list[str], bonferroni: bool) -> dict:
    """Read the run's repeat-0 values and compute :func:`ragassay.analysis.power.plan`: rows, settings, json."""
    import dataclasses

    from ..analysis.comparison import per_sample_values
    from ..analysis.power import comparisons, plan
    from ..errors import ConfigError

    values = per_sample_values(store, run["id"])
    systems = [s["name"] for s in store.run_systems(run["id"])]
    known = _metric_order(run, values)
    unknown = [m for m in metrics if m not in known]
    if unknown:
        raise ConfigError(
            f"run {run['id'][:12]} has no scored metric '{unknown[0]}'. Its metrics: {', '.join(known) or 'none'}"
        )
    chosen = list(dict.fromkeys(metrics)) or known
    if bonferroni:
        settings = dataclasses.replace(settings, comparisons=comparisons(systems, chosen))
    rows = plan(values, systems, chosen, settings, baseline)
    data = {
        "run": run["id"],
        "baseline": rows[0].baseline if rows else None,
        "design": "paired" if len(systems) > 1 else "unpaired",
        "alpha": settings.alpha,
        "comparisons": settings.comparisons,
        "alpha_per_comparison": settings.level,
        "power": settings.power,
        "effect": settings.effect,
        "rows": [{"metric": r.estimate.metric, "system": r.system, "baseline": r.baseline, **_fields(r)} for r in rows],
    }
    result = {"rows": rows, "settings": settings, "run": run["id"], "paired": len(systems) > 1, "json": data}
    data["summary"] = closing_sentence(result)
    return result


def _fields(row) -> dict:
    estimate = row.estimate.as_dict()
    return {key: estimate[key] for key in FIELDS}


def _metric_order(run: dict, values: dict) -> list[str]:
    """Scored columns: configured metrics, then judges (``judge:<label>``), then any other, sorted."""
    spec = json.loads(run["spec_json"])
    scored = {column for (_, column) in values}
    configured = list(spec.get("metrics") or {}) + [f"judge:{j}" for j in spec.get("judges") or {}]
    return [c for c in configured if c in scored] + sorted(scored - set(configured))


def plan_table(result: dict) -> Table:
    """The plan as one table: metric, system, n, SD, MDE (and samples for the effect), with a legend."""
    settings, paired = result["settings"], result["paired"]
    columns = [
        Column("metric"),
        Column("system", header="system" if paired else "system (alone)"),
        Column("baseline", in_text=False),
        Column("n", numeric=True),
        Column("sd", header="SD of diff." if paired else "SD", numeric=True),
        Column("mde", header="MDE", numeric=True, show=_mde_cell),
    ]
    if settings.effect is not None:
        columns.append(Column("needed", header=f"samples for {settings.effect:g}", numeric=True, show=_needed_cell))
    columns += [Column(key, in_text=False) for key in ("alpha", "power", "effect", "mde_method", "needed_method")]
    columns.append(Column("reason", in_text=False))
    rows = result["json"]["rows"]
    title = f"run {result['run'][:8]}: power " + (
        f"against {result['rows'][0].baseline}" if paired and result["rows"] else "of one system (unpaired)"
    )
    return Table(title, columns, rows, [*legend(result), result["json"]["summary"]])


def _mde_cell(row: dict) -> str:
    if row["mde"] is not None:
        return f"{row['mde']:.3f}"
    return "no variation" if row["sd"] == 0 else "too few"


def _needed_cell(row: dict) -> str:
    if row["needed"] is None:
        return "-"
    return f"{row['needed']}" + (" (have)" if row["needed"] <= row["n"] else "")


def legend(result: dict) -> list[str]:
    """What the columns mean, the test they assume, and why a row has no figure."""
    settings, paired = result["settings"], result["paired"]
    level = f"alpha {settings.alpha:g}" + (
        f" / {settings.comparisons} comparisons = {settings.level:.4g} (Bonferroni)" if settings.comparisons > 1 else ""
    )
    notes = [
        f"MDE (minimum detectable effect): differences smaller than this are unlikely to be detected with the row's "
        f"n samples (two-sided t test at {level}, power {settings.power:g}; exact noncentral-t figures below 1000 "
        "samples). Smaller is better.",
    ]
    if paired:
        baseline = result["rows"][0].baseline if result["rows"] else "-"
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
    for row in result["rows"]:
        if row.estimate.reason:
            unplanned.setdefault(row.estimate.reason, []).append(f"{row.estimate.metric} ({row.system})")
    notes += [f"{reason}: {', '.join(where)}." for reason, where in unplanned.items()]
    return notes


def closing_sentence(result: dict) -> str:
    """The most constrained metric (:func:`ragassay.analysis.power.most_constrained`) in words."""
    from ..analysis.power import most_constrained

    row = most_constrained(result["rows"])
    if row is None:
        return "No metric varies across the samples: nothing to plan from. Score more (or more varied) samples."
    e = row.estimate
    pair = f"{row.system} vs {row.baseline}" if row.baseline else f"{row.system}, unpaired"
    sentence = (
        f"Most constrained: {e.metric} ({pair}): with {e.n} samples, differences below {e.mde:.3f} are unlikely "
        "to be detected"
    )
    if e.needed is None:
        return sentence + "."
    unit = "samples" if row.baseline else "samples per system"
    if e.needed <= e.n:
        return sentence + f"; {e.n} {unit} are already enough to detect {e.effect:g}."
    return sentence + f"; detecting {e.effect:g} would need {e.needed} {unit} ({e.needed - e.n} more)."


COMMANDS = [plan_command]
