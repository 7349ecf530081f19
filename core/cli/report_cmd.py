"""``ragassay report``: the GRAMMAR report of a stored run (semantic groups, R, Acc, blame, hypotheses).

The run's own stored ``[analysis]`` settings (judge, hypotheses, sampling) are used, so a report can always
be re-created from the results database alone. See docs/grammar.md for how to read it.
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, format_option, get_run, open_results, output_format
from .render import Column, Table, emit, esc


@click.command("report")
@click.argument("runs", nargs=-1)
@config_option
@db_option
@format_option
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Write the self-contained HTML report of RUNS (verdicts, breakdowns, plots, failure browser) to FILE.",
)
@click.option("--baseline", default=None, metavar="SYSTEM", help="HTML report: system the others are tested against.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="HTML report: level of the paired tests.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="HTML report: draws' seed.")
def report_command(
    runs: tuple[str, ...],
    config_path: Path,
    db: str | None,
    fmt: str | None,
    html_path: Path | None,
    baseline: str | None,
    alpha: float,
    seed: int,
) -> None:
    """GRAMMAR report of RUNS (ids or unique prefixes; default: the newest run), or with --html FILE the
    self-contained HTML report of RUNS (docs/results.md, "HTML report").

    Per system: gap / robust / non-robust groups, knowledge accuracy, Acc and R (Eq. 1-2), which module the
    wrong answers are blamed on, and for each [analysis] hypothesis the Table 2 rows per cluster, each
    "robust > non-robust?" answered yes / no / not detectable by a bootstrap interval of the difference.
    """
    from ..analysis.report import grammar_report

    fmt = output_format(fmt)
    store = open_results(config_path, db, runs)
    try:
        run_ids = [get_run(store, run)["id"] for run in runs] or [_newest_run(store)]
        if html_path is not None:
            _write_html(store, run_ids, html_path, baseline=baseline, alpha=alpha, seed=seed)
            return
        reports = [grammar_report(store, run_id) for run_id in run_ids]
    finally:
        store.close()
    for report in reports:
        if fmt == "rich":
            print_report(console(), report)
        else:
            emit(console(), report_tables(report), fmt, data=report)


def _newest_run(store) -> str:
    from ..errors import StoreError

    runs = store.list_runs()
    if not runs:
        raise StoreError("the results database has no run yet. Run 'ragassay run --config PROJECT' first.")
    return runs[0]["id"]


def _write_html(store, run_ids: list[str], path: Path, **settings) -> None:
    from ..errors import ConfigError
    from ..html_report import build_report

    page = build_report(store, run_ids, **settings)
    try:
        path.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(
            f"cannot write the HTML report to {path}: {exc.strerror}. Give a writable --html path."
        ) from exc
    console().print(f"HTML report of {len(run_ids)} run(s) written to {esc(str(path))} ({len(page):,} bytes)")


def report_tables(report: dict) -> list[Table]:
    """The report's tables: groups, blame, then each system's hypotheses."""
    tables = [_groups_table(report), _blame_table(report)]
    for system in report["systems"]:
        tables += [_hypothesis_table(system["system"], hypothesis) for hypothesis in system["hypotheses"]]
    return tables


def print_report(out, report: dict) -> None:
    """Render a report (from :func:`ragassay.analysis.report.grammar_report`) to a rich console."""
    out.print(
        f"[bold]GRAMMAR report[/]: run {esc(report['run'])} (project {esc(report['project'])}), "
        f"correct = judge '{esc(report['judge'])}'"
    )
    if report["ungrouped_samples"]:
        out.print(f"{report['ungrouped_samples']} samples have no group_id: each forms a group of its own.")
    tables = report_tables(report)
    emit(out, tables[:2], "rich")
    for system in report["systems"]:
        for example in system["gap_examples"][:3]:
            out.print(
                f"  gap group of {esc(system['system'])}: {esc(example['sql'] or example['group_id'])}", highlight=False
            )
    emit(out, tables[2:], "rich")
    if not report["settings"]["hypotheses"]:
        out.print(esc("No hypothesis configured: add [[analysis.hypotheses]] to the config (see docs/grammar.md)."))


def _groups_table(report: dict) -> Table:
    keys = ("total", "groups", "gap", "robust", "non-robust", "knowledge_accuracy", "Acc", "R", "lambda")
    columns = [Column("system")] + [Column(k, numeric=True) for k in keys] + [Column("excluded")]
    columns[1].header, columns[6].header = "samples", "knowledge acc"
    rows = []
    for system in report["systems"]:
        o = system["overall"]
        rows.append(
            {
                "system": system["system"],
                "total": o["total"],
                "groups": sum(o["groups"].values()),
                "gap": o["groups"]["gap"],
                "robust": o["groups"]["robust"],
                "non-robust": o["groups"]["non-robust"],
                "knowledge_accuracy": o["knowledge_accuracy"],
                "Acc": o["Acc"],
                "R": o["R"],
                "lambda": o["lambda"],
                "excluded": ", ".join(f"{n} {k}" for k, n in system["excluded"].items() if n) or "-",
            }
        )
    return Table("semantic groups (section 3.4): Acc = Eq. 2, R = Eq. 1", columns, rows)


def _blame_table(report: dict) -> Table:
    headers = {
        "wrong": "wrong",
        "gap": "in gap groups",
        "lm": "LM",
        "retrieval": "retrieval",
        "undetermined": "undetermined",
        "acc": "retrieval Acc",
        "r": "retrieval R",
        "gt_lm": "GT: LM",
        "gt_retrieval": "GT: retrieval",
        "gt_acc": "GT retrieval Acc",
        "gt_r": "GT retrieval R",
    }
    columns = [Column("system")] + [Column(k, header=h, numeric=True) for k, h in headers.items()]
    rows = []
    for system in report["systems"]:
        o, blame, gt = system["overall"], system["blame"], system["blame_ground_truth"] or {}
        only, gt_only = system["retrieval_only"], system["retrieval_only_ground_truth"] or {}
        rows.append(
            {
                "system": system["system"],
                "wrong": o["total"] - o["correct"],
                "gap": o["gap_total"],
                "lm": blame["lm"],
                "retrieval": blame["retrieval"],
                "undetermined": blame["undetermined"],
                "acc": only["Acc"],
                "r": only["R"],
                "gt_lm": gt.get("lm"),
                "gt_retrieval": gt.get("retrieval"),
                "gt_acc": gt_only.get("Acc"),
                "gt_r": gt_only.get("R"),
            }
        )
    return Table(
        "modular evaluation: wrong answers blamed (context comparison; ground truth)",
        columns,
        rows,
        ["GT: blame by the reference documents (where the samples name them); - where they do not"],
    )


def _hypothesis_table(system: str, hypothesis: dict) -> Table:
    from ..analysis.hypotheses import MODULAR_LABELS

    robust = ", ".join(map(str, hypothesis["robust"]))
    non_robust = ", ".join(map(str, hypothesis["non_robust"]))
    title = (
        f"{system}: hypothesis '{hypothesis['name']}' ({hypothesis['attribute']}: robust = {robust}, "
        f"non-robust = {non_robust})"
    )
    columns = [
        Column("rows"),
        Column("n", numeric=True, show=lambda r: f"{r['n robust']}/{r['n non-robust']}", in_data=False),
        Column("n robust", numeric=True, in_text=False),
        Column("n non-robust", numeric=True, in_text=False),
        Column("Acc robust", numeric=True),
        Column("Acc non-robust", numeric=True),
        Column("Acc: robust > non-robust?"),
        *_difference_columns("Acc"),
        Column("R robust", numeric=True),
        Column("R non-robust", numeric=True),
        Column("R: robust > non-robust?"),
        *_difference_columns("R"),
        Column(
            "lambda",
            numeric=True,
            show=lambda r: f"{fmt(r['lambda robust'], 2)}/{fmt(r['lambda non-robust'], 2)}",
            in_data=False,
        ),
        Column("lambda robust", numeric=True, in_text=False),
        Column("lambda non-robust", numeric=True, in_text=False),
        Column("LM excluded", numeric=True),
    ]
    rows = []
    for row in hypothesis["rows"]:
        r, n = row["robust"], row["non_robust"]
        rows.append(
            {
                "rows": row["sampling"] if row["modular"] is None else "  " + MODULAR_LABELS[row["modular"]],
                "n robust": r["total"],
                "n non-robust": n["total"],
                "Acc robust": r["Acc"],
                "Acc non-robust": n["Acc"],
                "Acc: robust > non-robust?": _answer(row["acc_test"]),
                **_difference_cells("Acc", row["acc_test"]),
                "R robust": r["R"],
                "R non-robust": n["R"],
                "R: robust > non-robust?": _answer(row["r_test"]),
                **_difference_cells("R", row["r_test"]),
                "lambda robust": r["lambda"],
                "lambda non-robust": n["lambda"],
                "LM excluded": None if row["modular"] is None else row["excluded_lm"],
            }
        )
    notes = [
        "robust > non-robust?: yes / no when the 95% bootstrap interval of the difference (robust - non-robust) "
        "lies above / below 0, not detectable when it contains 0; - without an interval (docs/grammar.md)"
    ]
    return Table(title, columns, rows, notes)


def _difference_columns(metric: str) -> list[Column]:
    """The difference and its interval: one text cell, three data columns."""
    key = f"{metric} diff"

    def show(row: dict) -> str:
        if row[key] is None:
            return "-"
        if row[f"{key} low"] is None:
            return f"{row[key]:+.3f}"
        return f"{row[key]:+.3f} [{row[f'{key} low']:+.3f}, {row[f'{key} high']:+.3f}]"

    return [
        Column(key, header=f"{key} [95% CI]", show=show, in_data=False),
        *(Column(k, numeric=True, in_text=False) for k in (key, f"{key} low", f"{key} high")),
        Column(f"{metric} no interval", in_text=False),
    ]


def _difference_cells(metric: str, test: dict | None) -> dict:
    test = test or {}
    return {
        f"{metric} diff": test.get("difference"),
        f"{metric} diff low": test.get("ci_low"),
        f"{metric} diff high": test.get("ci_high"),
        f"{metric} no interval": test.get("reason"),
    }


def _answer(test: dict | None) -> str:
    return "-" if not test or test["answer"] is None else test["answer"]


COMMANDS = [report_command]
