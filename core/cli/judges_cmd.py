"""``ragassay judges``: ``choose`` compares judge configurations of one run on the items people labelled and names
the cheapest one non-inferior in agreement to the best (:mod:`ragassay.analysis.judge_choice`); ``check``
re-judges a changed judge's calibration items and flags an agreement drop (:mod:`ragassay.analysis.judge_drift`,
the run itself: :mod:`ragassay.engine.calibration`)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .file_params import FilePath
from .help_text import ListsWholeSentences
from .render import Column, Table, emit


def agreement_options(margin_help: str):
    """The options ``choose`` and ``check`` share: where the labels come from, the rubric, the margin (its help
    says what it bounds), the agreement statistic and its bootstrap."""
    options = [
        click.option(
            "--labels",
            type=FilePath("a labels export (JSONL, one label per line)"),
            default=None,
            help="People's labels from a labels export (JSONL) instead of those stored for RUN.",
        ),
        click.option(
            "--rubric", default=None, help="The rubric, by NAME or rubric FILE (default: the labels' only rubric)."
        ),
        click.option("--margin", type=click.FloatRange(min=0.0), default=0.05, show_default=True, help=margin_help),
        click.option(
            "--statistic",
            type=click.Choice(["kappa", "weighted_kappa_quadratic", "spearman"]),
            default=None,
            help="Agreement statistic (default: kappa for binary, weighted_kappa_quadratic for ordinal rubrics).",
        ),
        click.option(
            "--judge-threshold", type=float, default=0.5, show_default=True, help="A score >= this is 'correct'."
        ),
        click.option(
            "--resamples", type=click.IntRange(min=2), default=2000, show_default=True, help="Bootstrap resamples."
        ),
        click.option(
            "--seed", type=int, default=0, show_default=True, help="Bootstrap seed (same seed, same intervals)."
        ),
    ]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command

    return apply


@click.group("judges", cls=ListsWholeSentences)
def judges_group() -> None:
    """Compare judge configurations against people's labels (docs/judges.md)."""


@judges_group.command("choose")
@click.argument("run")
@config_option
@db_option
@click.option("--judge", "judges", multiple=True, help="Judge configurations to compare (default: every judge).")
@click.option("--metric", "metrics", multiple=True, help="Also compare a metric as a judge: NAME:THRESHOLD.")
@agreement_options("Non-inferiority margin: the agreement a cheaper judge may lose to the best.")
@format_option
def choose_command(
    run: str,
    config_path: Path,
    db: str | None,
    labels: Path | None,
    rubric: str | None,
    judges: tuple[str, ...],
    metrics: tuple[str, ...],
    margin: float,
    statistic: str | None,
    judge_threshold: float,
    resamples: int,
    seed: int,
    fmt: str | None,
) -> None:
    """Name the cheapest judge of RUN whose agreement with people is non-inferior to the best at --margin."""
    from ..analysis.jsonable import jsonable
    from ..analysis.judge_choice import choose_judge

    fmt = output_format(fmt)
    loaded, people, source = _run_and_labels(run, config_path, db, labels)
    chosen_rubric = _rubric(people, rubric, source)
    result = choose_judge(
        loaded,
        people,
        chosen_rubric,
        judges=judges,
        metrics=metrics,
        margin=margin,
        statistic=statistic,
        judge_threshold=judge_threshold,
        resamples=resamples,
        seed=seed,
    )
    data = jsonable(result)
    emit(console(), [_table(result, source)], fmt, data=data if fmt == "json" else None)


def _run_and_labels(run, config_path, db, labels):
    """The run read once and people's labels (from the file, else the store), with where they came from."""
    from ..analysis.human_labels import read_label_export, stored_labels
    from ..errors import ConfigError
    from ..results import read_labels
    from .common import open_results, read_runs

    store = open_results(config_path, db, (run,))
    try:
        loaded = read_runs(store, [run])[0]
        stored = stored_labels(read_labels(store, loaded.id)) if labels is None else []
    finally:
        store.close()
    if labels is not None:
        return loaded, read_label_export(labels), f"labels:{labels.name}"
    if not stored:
        raise ConfigError(
            f"run {loaded.id[:12]} has no labelled item: label some outputs (ragassay label {loaded.id[:12]}) or "
            "give people's labels with --labels FILE"
        )
    return loaded, stored, "labels in the results store"


def _rubric(people, rubric: str | None, source: str):
    from ..analysis.human_labels import rubric_files, rubric_of
    from ..errors import ConfigError

    if rubric is not None:
        names, given = rubric_files([rubric])
        return rubric_of(names[0], given)
    found = sorted({label.rubric for label in people})
    if len(found) != 1:
        raise ConfigError(f"{source} hold labels of rubrics {', '.join(found)}: choose one with --rubric NAME")
    return rubric_of(found[0])


def _interval(key: str):
    def show(row: dict) -> str:
        if row.get(key) is None:
            return "-"
        if row.get(f"{key}_low") is None:
            return f"{row[key]:+.3f}" if key == "difference" else f"{row[key]:.3f}"
        sign = "+" if key == "difference" else ""
        return f"{row[key]:{sign}.3f} [{row[f'{key}_low']:{sign}.3f}, {row[f'{key}_high']:{sign}.3f}]"

    return show


def _table(result, source: str) -> Table:
    rows = []
    for option in result.options:
        row = option.as_row()
        row["choice"] = "chosen" if option.name == result.chosen else "best" if option.name == result.best else ""
        rows.append(row)
    columns = [
        Column("judge"),
        Column("agreement", header=f"{result.statistic} [95% CI]", numeric=True, show=_interval("agreement")),
        Column("difference", header="minus best [CI]", numeric=True, show=_interval("difference")),
        Column("non_inferior", header="non-inferior", show=lambda r: "yes" if r["non_inferior"] else "no"),
        Column("cost_per_item_usd", header="$ per item", numeric=True, digits=6),
        Column("calls_per_item", header="calls per item", numeric=True, digits=2),
        Column("tokens_per_item", header="tokens per item", numeric=True, digits=0),
        Column("reasoning_tokens_per_item", header="reasoning per item", numeric=True, digits=0),
        Column("choice"),
    ]
    columns += [Column(f"{k}_{e}", in_text=False) for k in ("agreement", "difference") for e in ("low", "high")]
    columns.append(Column("identity", in_text=False))
    notes = [
        f"chosen: {result.chosen}, the cheapest judge whose agreement minus the best's ({result.best}) has its "
        f"{result.confidence:.0%} paired-bootstrap lower bound above -{result.margin:g}, on the same "
        f"{result.items} labelled items ({source}, rubric {result.rubric}); cost per item at list prices"
    ]
    title = f"judge configurations against people, run {result.run_id[:8]}"
    return Table(title, columns, rows, notes=notes + result.notes)


@judges_group.command("check")
@click.argument("run")
@config_option
@db_option
@click.option("--judge", required=True, help="The judge's label (in [evaluation] judges and in RUN).")
@click.option(
    "--against",
    default=None,
    help="A run holding a new judge's judgements of RUN's labelled outputs: compare with it instead of "
    "re-judging with the configured judge.",
)
@agreement_options("The agreement the new judge may lose before it counts as a drop.")
@format_option
@click.pass_context
def check_command(ctx: click.Context, run: str, config_path: Path, db: str | None, **options) -> None:
    """Re-judge the labelled items of RUN when the configured judge's identity changed; flag an agreement drop.

    Exit code: 0 held (or the identity is unchanged: nothing re-judged), 1 dropped, 3 may have dropped, 2 an
    error. The re-judging is a run of its own (stored, cached, resumed when the check is run again)."""
    from ..analysis.jsonable import jsonable

    fmt = output_format(options.pop("fmt"))
    loaded, people, source = _run_and_labels(run, config_path, db, options.pop("labels"))
    chosen_rubric = _rubric(people, options.pop("rubric"), source)
    judge, against = options.pop("judge"), options.pop("against")
    check = _check(loaded, people, chosen_rubric, judge, (config_path, db), against, options)
    emit(console(), [_check_table(check, source)], fmt, data=jsonable(check) | {"exit_code": check.exit_code})
    ctx.exit(check.exit_code)


def _check(run, people, rubric, judge: str, where: tuple, against: str | None, settings: dict):
    """The judge's check: nothing when the configured identity judged the items, else a re-judging (or the
    judgements of ``against``) compared with the old ones; what it decided is stored with the re-judged run."""
    import time

    from ..analysis.judge_drift import calibration_items, check_judge, check_record, judged_before, unchanged
    from ..engine.calibration import store_check
    from .common import get_run, open_results, read_runs

    items = {label.item for label in calibration_items(run, people, rubric)}
    before = judged_before(run, judge)
    plan, identity = (None, None) if against else _configured(where[0], judge)
    if identity is not None and before == (identity,):
        return unchanged(run, judge, identity, rubric)
    store = open_results(where[0], where[1], (run.id,) + ((against,) if against else ()))
    try:
        rejudged_id = get_run(store, against)["id"] if against else _rejudge(store, run, judge, identity, plan, items)
        rejudged = read_runs(store, [rejudged_id])[0]
        identity = identity or _only_identity(rejudged, judge)
        answers = (_answers(store, run.id, items), _answers(store, rejudged_id, items))
        check = check_judge(run, rejudged, people, rubric, judge, identity, answers=answers, **settings)
        if check.outcome != "unchanged":
            store_check(store, rejudged_id, rejudged.info.spec, check_record(check, time.time()))
    finally:
        store.close()
    return check


def _configured(config_path: Path, judge: str):
    """The project's run plan and the identity of its judge ``judge``."""
    from ..engine.calibration import judge_identity
    from ..engine.project import Project
    from ..engine.runner import plan_run

    plan = plan_run(Project.load(config_path))
    return plan, judge_identity(plan, judge)


def _rejudge(store, run, judge: str, identity: str, plan, items: set) -> str:
    """Run (or resume) the calibration run: the configured judge on the labelled outputs; its id."""
    from ..engine.calibration import calibration_plan, require_stored_outputs, run_calibration

    narrowed = calibration_plan(plan, judge, items)
    require_stored_outputs(narrowed, store)
    description = f"judges check: judge '{judge}' ({identity}) on the calibration items of run {run.id[:12]}"
    return run_calibration(narrowed, store, description)


def _only_identity(run, judge: str) -> str:
    from ..analysis.judge_drift import judged_before
    from ..errors import ConfigError

    found = judged_before(run, judge)
    if len(found) != 1:
        raise ConfigError(f"run {run.id[:12]}'s judge '{judge}' carries {len(found)} identities; compare one")
    return found[0]


def _answers(store, run_id: str, items: set) -> dict:
    from ..results import read_payloads

    outputs = read_payloads(store, run_id, sorted({question for _, question in items}))
    return {key: output.answer for key, output in outputs.items()}


def _check_table(check, source: str) -> Table:
    rows = [
        {"judge": "before", "identity": ", ".join(check.before), "agreement": check.agreement_before},
        {"judge": "after", "identity": check.identity, "agreement": check.agreement_after},
    ]
    for row in rows:
        a = row.pop("agreement")
        row |= {"agreement": a and a.value, "agreement_low": a and a.low, "agreement_high": a and a.high}
    columns = [
        Column("judge"),
        Column("identity"),
        Column(
            "agreement", header=f"{check.statistic or 'agreement'} [95% CI]", numeric=True, show=_interval("agreement")
        ),
    ]
    columns += [Column(f"agreement_{e}", in_text=False) for e in ("low", "high")]
    return Table(
        f"judge {check.judge} on its calibration items, run {check.run_id[:8]}",
        columns,
        rows,
        notes=_check_notes(check, source),
    )


def _check_notes(check, source: str) -> list[str]:
    if check.outcome == "unchanged":
        return [f"unchanged: the configured judge is {check.identity}, which judged these items; nothing re-judged"]
    c = check.change
    interval = "undefined" if c.value is None else f"{c.value:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"
    return [
        f"{check.outcome}: agreement after minus before {interval} ({check.confidence:.0%} paired bootstrap), "
        f"margin {check.margin:g}, on {check.items} labelled items ({source}, rubric {check.rubric})",
        f"re-judged in run {check.calibration_run[:12]}",
        *check.notes,
    ]


COMMANDS = [judges_group]
