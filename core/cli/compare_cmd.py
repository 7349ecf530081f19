"""``ragassay compare``: systems x metrics side by side for stored runs, then the verdicts in words.

Reads each run once (:func:`ragassay.results.read_run`), computes :func:`ragassay.analysis.comparison.compare`
and renders it (:mod:`.comparison_view`).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, open_results, output_format, read_runs
from .ppi_view import labelled_options


def decision_options(command):
    """``--baseline``, ``--alpha``, ``--seed``, ``--decide`` (passed as keyword arguments)."""
    options = [
        click.option(
            "--baseline",
            default=None,
            metavar="SYSTEM",
            help="System the others are tested against (default: the run's first system).",
        ),
        click.option("--alpha", type=float, default=0.05, show_default=True, help="Family-wise level of the verdicts."),
        click.option(
            "--seed",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Seed of the bootstrap and permutation draws (same seed, same numbers).",
        ),
        click.option(
            "--decide",
            "family",
            multiple=True,
            metavar="METRIC",
            help="A metric (or judge:LABEL, latency_s, tokens) that decides; repeat for several "
            "(default: the run's [evaluation] decide, else every metric that varies).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command("compare")
@click.argument("runs", nargs=-1, required=True)
@config_option
@db_option
@click.option(
    "--against",
    default=None,
    metavar="SYSTEM",
    help="Test every system against SYSTEM and show each paired difference (sets the baseline).",
)
@decision_options
@labelled_options
@click.option("--all-columns", is_flag=True, help="Also show columns that carry no information (constant, zero).")
@click.option(
    "--table",
    type=click.Choice(
        ["comparison", "pairs", "verdicts", "sequential", "latency", "variance", "ppi", "ppi-systems", "ppi-sequential"]
    ),
    default=None,
    help="The table csv writes (default: comparison); with markdown, only this table.",
)
@click.option(
    "--sequential",
    is_flag=True,
    help="With --labelled: also decide each labelled comparison anytime-valid (a confidence sequence over the "
    "samples in the run's seeded order, valid at every sample count at once: it may be checked while labelling; "
    "docs/statistics.md, Checking while you label).",
)
@click.option("--explain", is_flag=True, help="Explain the intervals, Holm p, Tarone's reduction and the MDE.")
@click.option("--compact", is_flag=True, help="Plain text for CI logs: no box drawing, no colour.")
@format_option
def compare_command(runs: tuple[str, ...], config_path: Path, db: str | None, fmt: str | None, **options) -> None:
    """Systems x metrics side by side for one or more RUNS (ids or unique prefixes), then the verdicts.

    Each cell: mean over scored outputs, n (scored count) and a 95% bootstrap interval; unscored outputs are
    counted separately. The verdicts test every system of a run against its baseline (first system, --baseline or
    --against) on the samples both scored, over the declared decision family: one paired permutation test per
    pair and the interval that inverts it, Holm-adjusted (docs/statistics.md). With --labelled METRIC=RUBRIC, the
    labelled metrics decide on people's labels instead (prediction-powered verdicts; the other columns are
    described, not decided). --sequential adds their anytime-valid decisions (table ppi-sequential).
    """
    from .comparison_view import comparison_tables, data_of, print_comparison
    from .render import emit

    fmt = output_format(fmt)
    against, table = options.pop("against"), options.pop("table")
    explain, compact = options.pop("explain"), options.pop("compact")
    baseline = options.pop("baseline")
    if against is not None and baseline not in (None, against):
        raise click.UsageError(f"--against {against} and --baseline {baseline} name two baselines; give one.")
    people = options.pop("labelled"), options.pop("labels_path")
    comparison, ppi, used, anytime = read_comparison(
        config_path, db, runs, baseline=against or baseline, people=people, **options
    )
    out = console(no_color=compact or None)
    if fmt == "rich":
        quiet = {"conclude": False, "verdicts": False} if ppi else {}
        print_comparison(out, comparison, against=against, explain=explain, compact=compact, **quiet)
        _print_ppi(out, ppi, used, compact)
        _print_anytime(out, anytime, compact)
        return
    tables = comparison_tables(comparison, against) | _ppi_tables(ppi, used) | _anytime_tables(anytime)
    if fmt == "json":
        extra = {"ppi": _ppi_data(ppi), "ppi_labels": used.as_dicts()} if ppi else {}
        extra |= {"ppi_sequential": _anytime_tables(anytime)["ppi-sequential"].records()} if anytime else {}
        emit(out, [], "json", data=data_of(comparison, tables) | extra)
        return
    name = table or ("comparison" if fmt == "csv" else None)
    if name is not None and name not in tables:
        raise click.UsageError(f"--table {name}: this comparison has no such table; it has {', '.join(tables)}.")
    emit(out, [tables[name]] if name else list(tables.values()), fmt)


def read_comparison(
    config_path: Path, db: str | None, runs, *, family=(), people=((), None), sequential=False, **settings
):
    """Read ``runs`` once and compare them (:func:`ragassay.analysis.comparison.compare`); with labelled metrics
    (``people``: ``--labelled`` and ``--labels``, else each run's ``[evaluation] labelled``), also their
    prediction-powered verdicts (:func:`ragassay.analysis.ppi_decisions.ppi_compare`), one per run, on the labels
    that count on it (read with its answers: :func:`ragassay.results.read_people`); with ``sequential``, their
    anytime-valid decisions too (:func:`ragassay.analysis.ppi_sequential.sequential_ppi`). Returns (comparison,
    verdicts, :class:`ragassay.results.PeopleLabels` or None, anytime-valid decisions per run)."""
    import functools

    from ..analysis.comparison import compare
    from ..results import read_run
    from ..results.calibration import read_calibration
    from .ppi_view import labelled_specs, people_labels

    store = open_results(config_path, db, runs)
    try:
        data = read_runs(store, runs)
        wanted = [labelled_specs(people[0], run.info.config) for run in data]
        if any(wanted):
            full = {run.id: read_run(store, run.id, payloads=True) for run, entries in zip(data, wanted) if entries}
            data = [full.get(run.id, run) for run in data]
            entries = [e for found in wanted for e in found]
            labels, used = people_labels([(store, full[r.id]) for r in data if r.id in full], entries, people[1])
        calibration = functools.partial(read_calibration, store)  # read only when a model judge decides
        if not any(wanted):
            if sequential:
                raise click.UsageError(
                    "--sequential decides labelled metrics anytime-valid: give --labelled METRIC=RUBRIC (a "
                    "sequential run's own decisions are shown without the flag)"
                )
            comparison = compare(data, family=list(family) or None, **settings)
            warn_uncalibrated(data, [r.verdicts.family for r in comparison.runs], calibration)
            return comparison, [], None, []
        if family:
            raise click.UsageError("with --labelled the labelled metrics decide: drop --decide")
        warn_uncalibrated(data, [[e.metric for e in entries] for entries in wanted], calibration)
    finally:
        store.close()
    ppi = _ppi(data, wanted, labels, used.source, settings)
    anytime = _anytime(data, wanted, labels, ppi, settings) if sequential else []
    return compare(data, family=[], **settings), ppi, used, anytime


def warn_uncalibrated(runs, families, calibration) -> None:
    """One line on stderr per deciding judge without calibration items or whose last check flagged a drop."""
    from ..analysis.judge_drift import decision_warnings
    from ..text import terminal_safe

    for line in decision_warnings(runs, families, calibration):
        click.echo(terminal_safe(line), err=True)


def _ppi(data, wanted, labels, source: str, settings: dict) -> list:
    from ..analysis.ppi_decisions import ppi_compare

    return [
        ppi_compare(run, labels, entries, baseline=settings.get("baseline"), alpha=settings["alpha"], source=source)
        for run, entries in zip(data, wanted)
        if entries
    ]


def _anytime(data, wanted, labels, ppi: list, settings: dict) -> list:
    """(run id, anytime-valid pairs, the run's fixed-n verdicts) for each run with labelled metrics."""
    from ..analysis.ppi_sequential import sequential_ppi

    fixed = iter(ppi)
    return [
        (run.id, sequential_ppi(run, labels, entries, baseline=settings.get("baseline"), alpha=settings["alpha"]),
         next(fixed))
        for run, entries in zip(data, wanted)
        if entries
    ]  # fmt: skip


def _anytime_tables(anytime: list) -> dict:
    from .ppi_sequential_view import ppi_sequential_table

    return {"ppi-sequential": ppi_sequential_table(anytime)} if anytime else {}


def _print_anytime(out, anytime: list, compact: bool) -> None:
    from .ppi_sequential_view import ppi_sequential_lines
    from .render import emit, esc

    if not anytime:
        return
    emit(out, list(_anytime_tables(anytime).values()), "rich", compact=compact)
    for line in ppi_sequential_lines(anytime):
        out.print(esc(line), highlight=False)


def _ppi_tables(ppi: list, people) -> dict:
    from .ppi_view import ppi_pairs_table, ppi_systems_table

    return {"ppi": ppi_pairs_table(ppi, people=people), "ppi-systems": ppi_systems_table(ppi)} if ppi else {}


def _ppi_data(ppi: list) -> list[dict]:
    import dataclasses

    return [dataclasses.asdict(v) for v in ppi]


def _print_ppi(out, ppi: list, people, compact: bool) -> None:
    from .ppi_view import ppi_lines
    from .render import emit, esc

    if not ppi:
        return
    emit(out, [t for t in _ppi_tables(ppi, people).values() if t.rows], "rich", compact=compact)
    for verdicts in ppi:
        for line in ppi_lines(verdicts):
            out.print(esc(line), highlight=False)


COMMANDS = [compare_command]
