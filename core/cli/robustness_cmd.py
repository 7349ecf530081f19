"""``ragassay robustness RUN``: the robustness profile of a run with perturbed systems (docs/robustness.md).

Reads the run once with payloads (:func:`ragassay.results.read_run`), computes
:func:`ragassay.analysis.robustness.profile` and renders it (:mod:`ragassay.present.robustness_tables`).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, open_results, output_format, read_runs


@click.command("robustness")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help="An outcome metric (or judge:LABEL) to measure the effects on; repeat for several "
    "(default: [evaluation] decide, else the first judge, else the first metric).",
)
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise level of the verdicts.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random draws.")
@click.option(
    "--table",
    type=click.Choice(["effects", "rates", "ranking", "groups", "across"]),
    default=None,
    help="The table csv writes (default: effects); with markdown, only this table.",
)
@format_option
def robustness_command(run: str, config_path: Path, db: str | None, fmt: str | None, **options) -> None:
    """What each perturbation does to each system of RUN, against its unperturbed twin.

    For each perturbed system (operator and strength): the effect on the outcome metric with its interval and
    verdict (paired sign-flip test, Holm over the perturbations of one twin), how often the answer changed, the
    metrics per perturbation (refusal, counterfactual following, injection success), a ranking of what breaks each
    system most, for GRAMMAR data whether robust groups stay robust, and the same perturbation compared across
    systems (e.g. a hardened prompt against the plain one under injection).
    """
    from ..analysis.jsonable import jsonable
    from ..analysis.robustness import profile
    from ..present.robustness_tables import profile_tables
    from .render import emit

    fmt = output_format(fmt)
    store = open_results(config_path, db, [run])
    try:
        data = read_runs(store, [run], payloads=True)[0]
    finally:
        store.close()
    table = options.pop("table")
    result = profile(data, metrics=list(options.pop("metrics")) or None, **options)
    tables = profile_tables(result)
    out = console()
    if fmt == "json":
        emit(out, [], "json", data={"profile": jsonable(result), **{n: t.records() for n, t in tables.items()}})
        return
    name = table or ("effects" if fmt == "csv" else None)
    if name is not None and name not in tables:
        raise click.UsageError(f"--table {name}: this run has no such table; it has {', '.join(tables)}.")
    chosen = [tables[name]] if name else list(tables.values())
    emit(out, chosen, fmt)
    if fmt == "rich" and result.groups_reason and not name:
        out.print(f"GRAMMAR groups: not shown ({result.groups_reason})", highlight=False, markup=False)


COMMANDS = [robustness_command]
