"""``ragassay gate``: check the baseline, run (or resume) a config, compare it with the baseline, exit 0 / 1 / 2.

The comparison is :func:`ragassay.analysis.gate.gate`, the summary
:func:`ragassay.analysis.gate_summary.markdown_summary`; this module only checks, runs, reads, writes and prints.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..text import terminal_safe
from .common import config_option, console, project_path
from .file_params import FilePath, folder_given
from .ppi_view import labelled_options

BASELINE_HELP = (
    "What to compare with: a run id (or unique prefix) in the project's results database, or another results "
    "database (a SQLite path or a URL, e.g. the main branch's results restored from the CI cache) with an "
    "optional #RUN suffix (default: its newest run with the same config fingerprint, else of the same project)."
)


@click.command(
    "gate",
    short_help="The CI gate: run CONFIG, compare each system with the --baseline run; exit 0 pass, 1 fail, 2 error.",
)
@click.argument("config", required=False, type=click.Path(path_type=Path))
@config_option
@click.option("--baseline", required=True, metavar="RUN|DATABASE[#RUN]", help=BASELINE_HELP)
@click.option(
    "--metric",
    "metrics",
    multiple=True,
    metavar="METRIC",
    help="A metric (or judge:LABEL, latency_s, tokens) of the decision family; repeat for several "
    "(default: [evaluation] decide, else every metric both runs scored that varies).",
)
@click.option(
    "--mode",
    type=click.Choice(["non-inferiority", "superiority"]),
    default=None,
    help="non-inferiority (default, [gate] mode): pass only what is shown above -margin; superiority: fail only "
    "what is shown worse.",
)
@click.option(
    "--margin",
    type=click.FloatRange(min=0),
    default=None,
    help="The largest drop that passes, as a share of each metric's range (default [gate] margin, 0.02); "
    "per metric: [gate] margins.",
)
@click.option(
    "--on-inconclusive",
    type=click.Choice(["fail", "pass"]),
    default=None,
    help="Exit code of a pair the samples cannot decide (default [gate] on_inconclusive: fail).",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0, 1, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Family-wise level of the gate's decisions.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the random draws.")
@labelled_options
@click.option(
    "--summary",
    "summary_path",
    type=FilePath("the markdown file to write, e.g. {folder}/summary.md"),
    help="Write the markdown summary here.",
)
@click.option(
    "--html",
    "html_path",
    type=FilePath("the HTML file to write, e.g. {folder}/report.html"),
    help="Write the candidate's HTML report here.",
)
@click.option("--report-url", default=None, help="Where CI publishes the HTML report (linked from the summary).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["rich", "markdown", "json"]),
    default="rich",
    show_default=True,
    help="Stdout: the summary as text (rich), as raw markdown, or the whole result as json.",
)
@click.option(
    "--quiet",
    "-q",
    is_flag=True,
    help="Print nothing when the gate passes, one line on stderr (its headline) when it fails; no progress "
    "(files are still written).",
)
@click.option("--no-cache", "no_cache", is_flag=True, help="Call the models even for cached requests.")
@click.option("--wait", is_flag=True, help="If another process is running this config, wait for it, then resume.")
@click.pass_context
def gate_command(ctx: click.Context, config: Path | None, config_path: Path, **options) -> None:
    """Check the --baseline run, run (or resume) the project CONFIG (default: the current folder) as the
    candidate, compare each system with the system of the same name in the baseline run on the samples both hold,
    and exit

    \b
      0  every comparison passes,
      1  a regression, or a comparison the samples cannot decide (unless --on-inconclusive pass),
      2  an error: bad input, a missing baseline, no shared samples (one line on stderr).

    Non-inferiority by default: a pair passes only when its difference is shown to be above -margin (docs/ci.md).
    """
    from ..errors import RagassayError

    try:
        code = _gate(project_path(config, config_path), **options)
    except (RagassayError, click.ClickException, click.exceptions.Exit, click.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - in CI any failure must read as an error (2), not a regression (1)
        raise RagassayError(
            f"internal error: {type(exc).__name__}: {exc}. Re-run with --debug for the traceback."
        ) from exc
    ctx.exit(code)


def _gate(config: Path, *, baseline: str, metrics, mode, margin, on_inconclusive, alpha, seed, **options) -> int:
    from ..analysis.gate import GateSettings, gate, parse_baseline
    from ..analysis.gate_summary import markdown_summary
    from ..config import load_config

    database, run_ref = parse_baseline(baseline)
    loaded = load_config(config)
    settings = GateSettings.of(
        loaded.config.gate,
        mode=mode,
        margin=margin,
        on_inconclusive=on_inconclusive,
        alpha=alpha,
        seed=seed,
        family=list(metrics) or loaded.config.evaluation.decide,
    )
    base = _Baseline(loaded, database, run_ref)
    try:
        run_id = _run_candidate(loaded, base.check, options)
        labelled = _labelled(loaded, options)
        candidate, baseline_run = base.read(run_id, payloads=bool(labelled))
        common = {"baseline_source": base.source, "same_run": base.same(run_id)}
        _warn_uncalibrated(base.store, candidate, settings.family, labelled)
        if not labelled:
            result = gate(candidate, baseline_run, settings, **common)
        else:
            result = _ppi_gate(base, candidate, baseline_run, settings, labelled, options["labels_path"], common)
        html_path = options["html_path"]
        if html_path is not None:
            from ..present.html_report import build_report

            html_path.write_text(build_report(base.store, [run_id], alpha=alpha, seed=seed), encoding="utf-8")
    finally:
        base.close()
    text = markdown_summary(result, report_url=options["report_url"], html_path=_text(options["html_path"]))
    if options["summary_path"] is not None:
        options["summary_path"].write_text(text, encoding="utf-8")
    if not options["quiet"]:
        _print(text, result, options["fmt"])
    elif result.exit_code:
        click.echo(terminal_safe(_failed_line(result)), err=True)
    return result.exit_code


def _labelled(loaded, options: dict) -> list:
    """The labelled metrics of ``--labelled``, else of ``[evaluation] labelled``."""
    from .ppi_view import labelled_specs

    return labelled_specs(options.pop("labelled"), {"evaluation": loaded.config.evaluation.model_dump()})


def _ppi_gate(base, candidate, baseline_run, settings, labelled, path, common):
    """The gate on people's labels: the labels that count on the candidate run and on the baseline run (the
    labels export ``--labels``, else both stores' labels of the runs' samples; :func:`.ppi_view.people_labels`),
    what counted in the notes and in ``ppi_labels``."""
    import dataclasses

    from ..analysis.ppi_decisions import ppi_gate
    from .ppi_view import people_labels

    sides = [(base.store, candidate), (base.base_store, baseline_run)]
    labels, used = people_labels(sides, labelled, path)
    result = ppi_gate(candidate, baseline_run, settings, labels, labelled, **common)
    return dataclasses.replace(result, notes=[*result.notes, *used.lines()], ppi_labels=used.as_dicts())


def _warn_uncalibrated(store, candidate, family, labelled) -> None:
    """The calibration warnings (``compare``'s) for the judges that decide the candidate's gate: the labelled
    metrics with ``--labelled``, else the decision family."""
    from ..results.calibration import read_calibration
    from .compare_cmd import warn_uncalibrated

    deciding = [e.metric for e in labelled] if labelled else (family or candidate.columns)
    warn_uncalibrated([candidate], [deciding], lambda: read_calibration(store))


def _failed_line(result) -> str:
    """What ``--quiet`` prints when the gate fails: its headline and the runs."""
    from ..analysis.gate_summary import headline

    return f"{headline(result)} (candidate run {result.candidate_run[:12]}, baseline run {result.baseline_run[:12]})"


class _Baseline:
    """The baseline's database and run, found and checked against the planned candidate before anything runs."""

    def __init__(self, loaded, database: str | None, ref: str | None):
        from ..engine.project import Project

        self.store = Project(loaded).open_store()
        self.database, self.ref = database, ref
        self.base_store = self.store if database is None else _open_baseline(database)
        self.run_id = ""
        self.source = "this project's results database" if database is None else _redacted(database)

    def check(self, plan) -> None:
        """Find the baseline run and check it shares samples with the planned candidate (before it runs)."""
        from ..errors import DatasetError
        from ..results.read import pick_baseline
        from .common import get_run

        if self.database is None:
            self.run_id = get_run(self.base_store, self.ref)["id"]
        else:
            project = plan.loaded.config.project.name
            self.run_id = pick_baseline(self.base_store, plan.fingerprint(), project, self.ref)["id"]
        ids = {q for q, _ in self.base_store.sample_rows(self.run_id)}
        mine = [s.question_id for s in plan.samples]
        if not ids.intersection(mine):
            raise DatasetError(
                f"the baseline run {self.run_id[:12]} ({len(ids)} samples) shares no question_id with this config's "
                f"{len(mine)} samples, so nothing can be paired: nothing was run. Gate against a run of the same "
                "dataset (--baseline PATH#RUN), or keep the question_ids stable."
            )

    def read(self, run_id: str, payloads: bool = False):
        from ..results import read_run

        return read_run(self.store, run_id, payloads=payloads), read_run(
            self.base_store, self.run_id, payloads=payloads
        )

    def same(self, run_id: str) -> bool:
        return run_id == self.run_id and self.base_store is self.store

    def close(self) -> None:
        if self.base_store is not self.store:
            self.base_store.close()
        self.store.close()


def _run_candidate(loaded, check, options: dict) -> str:
    """Run or resume the config (progress and warnings on stderr) after ``check`` passed; the run's id."""
    from ..api import run
    from .progress import build_callbacks, make_progress, progress_every, run_callbacks, system_count

    quiet = options["quiet"]
    progress = make_progress(quiet, progress_every(None))
    on_start, on_result = run_callbacks(progress, system_count(loaded))
    if quiet:  # one line, or none on success (docs/ci.md)
        on_start = _nothing
    try:
        summary = run(
            loaded,
            no_cache=options["no_cache"],
            wait=options["wait"],
            on_start=on_start,
            on_result=on_result,
            on_plan=check,
            **build_callbacks(progress),
        )
    finally:
        if progress is not None:
            progress.stop()
    if quiet:
        return summary.run_id
    click.echo(
        f"candidate run {summary.run_id}: {summary.completed} units done, {summary.skipped} already done, "
        f"{summary.reused} reused, {summary.failed} failed",
        err=True,
    )
    for warning in summary.warnings:
        click.echo(f"  warning: {terminal_safe(warning)}", err=True)
    return summary.run_id


def _nothing(*_args) -> None:
    """A callback that says nothing (``--quiet``)."""


def _open_baseline(database: str):
    from ..errors import StoreError
    from ..store import open_store, store_url

    if "://" not in database and Path(database).is_dir():
        folder = database.rstrip("/")
        raise folder_given("--baseline", database, f"a results database file (e.g. {folder}/ragassay-results.db)")
    if "://" not in database and not Path(database).exists():
        raise StoreError(
            f"--baseline: no results database at {database}. In CI the main branch's results were not restored "
            f"(first run, or the cache expired): run the gate on main first (docs/ci.md), or give a run id."
        )
    return open_store(store_url(database, Path.cwd()), create=False, key="--baseline")


def _redacted(database: str) -> str:
    from ..store.urls import redact

    return redact(database)


def _text(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _print(text: str, result, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(terminal_safe(text), nl=False)
    else:
        from .render import esc

        console().print(esc(text), highlight=False, soft_wrap=True)


COMMANDS = [gate_command]
