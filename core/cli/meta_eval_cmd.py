"""``ragassay meta-eval``: how far can a judge be trusted? (ragassay.analysis.meta_eval)

Each judge of a run (and each metric given with a threshold) is scored as a detector of correct answers
against ground-truth correctness (GRAMMAR Table 1's layout: precision, recall, plus accuracy and Cohen's kappa,
each with a seeded bootstrap interval). With human labels on part of the outputs, each system's share of
correct answers is also estimated by prediction-powered inference: the judge on the unlabelled outputs,
corrected by its measured error on the labelled ones.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .file_params import FilePath
from .render import Column, Table, emit


@click.command("meta-eval")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--truth",
    default=None,
    help="Ground truth: judge:NAME (e.g. judge:match on reference or GRAMMAR exact answers) or METRIC:THRESHOLD "
    "(default: judge:match).",
)
@click.option(
    "--labels",
    type=FilePath("a labels export (JSONL), or a JSONL or CSV file with question_id, system and label"),
    default=None,
    help="Human labels instead: a labels export (JSONL, one label per line: run_id, sample_id, system(s), rubric, "
    "annotator, value), or a JSONL or CSV file with question_id, system and label (correct/incorrect). Without "
    "--truth and --labels, the labels stored for RUN are read when there are any.",
)
@click.option(
    "--rubric",
    "rubrics",
    multiple=True,
    help="With people's labels: only these rubrics (default all), by NAME or by FILE: a rubric TOML file also "
    "defines a custom rubric (the file given to labels import --rubric).",
)
@click.option("--judge", "judges", multiple=True, help="Judge(s) to evaluate (default: every judge but the truth).")
@click.option(
    "--metric", "metrics", multiple=True, help="Also evaluate a metric as a judge: NAME:THRESHOLD (value >= it)."
)
@click.option(
    "--judge-threshold",
    type=float,
    default=0.5,
    show_default=True,
    help="A judge that gives only a score calls an answer correct when score >= this.",
)
@click.option("--resamples", type=click.IntRange(min=0), default=2000, show_default=True, help="Bootstrap resamples.")
@click.option("--seed", type=int, default=0, show_default=True, help="Bootstrap seed (same seed, same intervals).")
@click.option(
    "--table",
    type=click.Choice(["detectors", "corrected", "ceiling"]),
    default="detectors",
    show_default=True,
    help="The table csv writes: the judges, the corrected estimates, or (people's labels) the people's agreement.",
)
@format_option
def meta_eval_command(
    run: str,
    config_path: Path,
    db: str | None,
    truth: str | None,
    labels: Path | None,
    rubrics: tuple[str, ...],
    judges: tuple[str, ...],
    metrics: tuple[str, ...],
    judge_threshold: float,
    resamples: int,
    seed: int,
    table: str,
    fmt: str | None,
) -> None:
    """Score RUN's judges against the truth: precision, recall, accuracy, kappa; corrected means (PPI)."""
    from ..analysis import meta_eval_load as load
    from ..analysis.jsonable import jsonable

    fmt = output_format(fmt)
    if truth is not None and labels is not None:
        raise click.UsageError("give the truth once: --truth or --labels, not both.")
    loaded, people = _run_and_labels(run, config_path, db, labels, truth)
    if people is not None:
        _people(loaded, people, rubrics, judges, metrics, judge_threshold, resamples, seed, table, fmt)
        return
    specs = [load.parse_metric_spec(m) for m in metrics]
    result = load.meta_evaluate(
        loaded,
        truth=truth,
        labels=labels,
        judges=judges,
        metrics=specs,
        judge_threshold=judge_threshold,
        resamples=resamples,
        seed=seed,
    )
    gold = result.truth
    title = f"judges as detectors of correct answers, run {result.run_id[:8]}: truth = {gold.source}"
    tables = [_detector_table(title, [d.as_row() for d in result.detectors], gold)]
    if gold.from_labels:
        tables.append(_corrected_table([jsonable(c) for c in result.corrected]))
    data = {
        "run": result.run_id,
        "truth": gold.source,
        "detectors": [d.as_row() for d in result.detectors],
        "corrected": jsonable(result.corrected),
    }
    if fmt == "csv":
        tables = tables[1:] if table == "corrected" and len(tables) > 1 else tables[:1]
    emit(console(), tables, fmt, data=data if fmt == "json" else None)


def _run_and_labels(run, config_path, db, labels, truth):
    """The run read once, and people's labels: (labels, source) from a labels export or the store, else None."""
    from ..analysis.human_labels import is_label_export, read_label_export, stored_labels
    from ..results import read_labels
    from ..store.locate import pick_run
    from .common import open_results, read_runs

    store = open_results(config_path, db, (run,) if run else ())
    try:
        loaded = read_runs(store, [run if run else pick_run(store)["id"]])[0]
        stored = stored_labels(read_labels(store, loaded.id)) if labels is None and truth is None else []
    finally:
        store.close()
    if labels is not None and is_label_export(labels):
        return loaded, (read_label_export(labels), f"labels:{labels.name}")
    return loaded, ((stored, "labels in the results store") if stored else None)


def _people(run, people, rubrics, judges, metrics, judge_threshold, resamples, seed, table, fmt) -> None:
    from ..analysis.human_labels import rubric_files
    from ..analysis.meta_eval_people import evaluate_against_people
    from .meta_eval_people_view import agreement_tables, corrected_tables, csv_table, people_data

    labels, source = people
    rubrics, given = rubric_files(rubrics)
    if rubrics:
        missing = sorted(set(rubrics) - {label.rubric for label in labels})
        if missing:
            raise click.UsageError(f"no label of rubric {', '.join(missing)} in {source}")
        labels = [label for label in labels if label.rubric in rubrics]
    result = evaluate_against_people(
        run,
        labels,
        source=source,
        judges=judges,
        metrics=metrics,
        judge_threshold=judge_threshold,
        rubrics=given,
        resamples=resamples,
        seed=seed,
    )
    if fmt == "csv":
        tables = [csv_table(result, table)]
    else:
        tables = agreement_tables(result) + corrected_tables(result, _corrected_table)
    emit(console(), tables, fmt, data=people_data(result) if fmt == "json" else None)


def _with_interval(key: str, low: str | None = None, high: str | None = None):
    low, high = low or f"{key}_low", high or f"{key}_high"

    def show(row: dict) -> str:
        if row.get(key) is None:
            return "-"
        if row.get(low) is None:
            return f"{row[key]:.3f}"
        return f"{row[key]:.3f} [{row[low]:.3f}, {row[high]:.3f}]"

    return show


def _detector_table(title: str, rows: list[dict], gold) -> Table:
    columns = [Column("judge"), Column("n", numeric=True)]
    for stat in ("precision", "recall", "accuracy", "kappa"):
        columns.append(Column(stat, numeric=True, show=_with_interval(stat)))
        columns += [Column(f"{stat}_low", in_text=False), Column(f"{stat}_high", in_text=False)]
    columns += [Column(k, numeric=True, in_text=False) for k in ("tp", "fp", "fn", "tn")]
    columns.append(Column("unscored", numeric=True))
    positives = sum(gold.values.values())
    notes = [
        f"positive = a correct answer ({positives} of {len(gold.values)} by the truth); precision = TP/(TP+FP), "
        "recall = TP/(TP+FN) (GRAMMAR Table 1); [95% interval: Wilson for the proportions, bootstrap for kappa]; "
        "unscored: no verdict, left out"
    ]
    if gold.unmatched:
        notes.append(f"{gold.unmatched} label rows match no output of the run and are left out")
    return Table(title, columns, rows, notes=notes)


def _corrected_table(rows: list[dict]) -> Table:
    columns = [Column("judge"), Column("system")] + [
        Column(k, numeric=True) for k in ("labelled", "unlabelled", "judge_mean", "rectifier")
    ]
    labels_show = _with_interval("labels_mean", "labels_low", "labels_high")
    columns.append(Column("labels_mean", header="labels only [95% CI]", numeric=True, show=labels_show))
    ppi_show = _with_interval("ppi_mean", "ppi_low", "ppi_high")
    columns.append(Column("ppi_mean", header="PPI [95% CI]", numeric=True, show=ppi_show))
    keys = ("labels_low", "labels_high", "ppi_low", "ppi_high", "ppi_clipped_from")
    columns += [Column(k, numeric=True, in_text=False) for k in keys]
    notes = [
        "share of correct answers per system: PPI = mean(judge on unlabelled) - mean(judge - label on labelled), "
        "interval +- z sqrt(var_unlabelled/N + var_residual/n); estimate and interval within [0, 1] "
        "(Angelopoulos et al. 2023); labels only: Wilson interval; '-' needs n, N >= 2"
    ]
    notes += [
        f"{row['judge']}, {row['system']}: the PPI estimate {row['ppi_clipped_from']:.3f} lies outside [0, 1] "
        f"(the rectifier {row['rectifier']:+.3f} is measured on {row['labelled']} labels) and is shown at "
        f"{row['ppi_mean']:.3f}; label more outputs to narrow it"
        for row in rows
        if row.get("ppi_clipped_from") is not None
    ]
    title = "corrected estimates (prediction-powered inference)"
    return Table(title, columns, rows, notes=notes, id_columns=("judge", "system"))


COMMANDS = [meta_eval_command]
