"""``ragassay report``: the GRAMMAR report of a stored run (semantic groups, R, Acc, blame, hypotheses).

The run's own stored ``[analysis]`` settings (judge, hypotheses, sampling) are used, so a report can always
be re-created from the results database alone. See docs/grammar.md for how to read it.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, open_results


@click.command("report")
@click.argument("run", required=False)
@config_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def report_command(run: str | None, config_path: Path, db: str | None, as_json: bool) -> None:
    """GRAMMAR report of RUN (id or unique prefix; default: the newest run).

    Per system: gap / robust / non-robust groups, knowledge accuracy, Acc and R (Eq. 1-2), which module the
    wrong answers are blamed on, and for each [analysis] hypothesis the Table 2 rows per cluster.
    """
    from ..analysis.report import grammar_report
    from ..errors import StoreError

    store = open_results(config_path, db)
    try:
        if run is None:
            runs = store.list_runs()
            if not runs:
                raise StoreError("the results database has no run yet. Run 'ragassay run CONFIG' first.")
            run = runs[0]["id"]
        report = grammar_report(store, run)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(report, indent=2, ensure_ascii=False))
        return
    print_report(console(), report)


def print_report(out, report: dict) -> None:
    """Render a report (from :func:`ragassay.analysis.report.grammar_report`) to a rich console."""
    from rich.markup import escape

    out.print(f"[bold]GRAMMAR report[/]: run {report['run']} (project {escape(report['project'])}), "
              f"correct = judge '{escape(report['judge'])}'")
    if report["ungrouped_samples"]:
        out.print(f"{report['ungrouped_samples']} samples have no group_id: each forms a group of its own.")
    out.print(_groups_table(report))
    out.print(_blame_table(report))
    for system in report["systems"]:
        for example in system["gap_examples"][:3]:
            out.print(f"  gap group of {escape(system['system'])}: {escape(example['sql'] or example['group_id'])}",
                      highlight=False)
    for system in report["systems"]:
        for hypothesis in system["hypotheses"]:
            out.print(_hypothesis_table(system["system"], hypothesis))
    if not report["settings"]["hypotheses"]:
        out.print("No hypothesis configured: add [[analysis.hypotheses]] to the config (see docs/grammar.md).")


def _groups_table(report: dict):
    from rich.table import Table

    table = Table(title="semantic groups (section 3.4): Acc = Eq. 2, R = Eq. 1")
    for column in ("system", "samples", "groups", "gap", "robust", "non-robust", "knowledge acc", "Acc", "R",
                   "lambda", "excluded"):
        table.add_column(column, justify="left" if column in ("system", "excluded") else "right")
    for system in report["systems"]:
        o = system["overall"]
        excluded = ", ".join(f"{n} {k}" for k, n in system["excluded"].items() if n) or "-"
        table.add_row(system["system"], str(o["total"]), str(sum(o["groups"].values())), str(o["groups"]["gap"]),
                      str(o["groups"]["robust"]), str(o["groups"]["non-robust"]), fmt(o["knowledge_accuracy"]),
                      fmt(o["Acc"]), fmt(o["R"]), fmt(o["lambda"]), excluded)
    return table


def _blame_table(report: dict):
    from rich.table import Table

    table = Table(title="modular evaluation: wrong answers blamed (context comparison; ground truth)")
    for column in ("system", "wrong", "in gap groups", "LM", "retrieval", "undetermined", "retrieval Acc",
                   "retrieval R", "GT: LM", "GT: retrieval", "GT retrieval Acc", "GT retrieval R"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for system in report["systems"]:
        o, blame, gt = system["overall"], system["blame"], system["blame_ground_truth"]
        only, gt_only = system["retrieval_only"], system["retrieval_only_ground_truth"]
        table.add_row(system["system"], str(o["total"] - o["correct"]), str(o["gap_total"]), str(blame["lm"]),
                      str(blame["retrieval"]), str(blame["undetermined"]), fmt(only["Acc"]), fmt(only["R"]),
                      str(gt["lm"]) if gt else "-", str(gt["retrieval"]) if gt else "-",
                      fmt(gt_only["Acc"]) if gt_only else "-", fmt(gt_only["R"]) if gt_only else "-")
    return table


def _hypothesis_table(system: str, hypothesis: dict):
    from rich.markup import escape
    from rich.table import Table

    from ..analysis.hypotheses import MODULAR_LABELS

    robust = ", ".join(map(str, hypothesis["robust"]))
    non_robust = ", ".join(map(str, hypothesis["non_robust"]))
    table = Table(title=f"{escape(system)}: hypothesis '{escape(hypothesis['name'])}' ({escape(hypothesis['attribute'])}: "
                        f"robust = {escape(robust)}, non-robust = {escape(non_robust)})")
    for column in ("rows", "n", "Acc robust", "Acc non-robust", "Acc: robust > non-robust?", "R robust",
                   "R non-robust", "R: robust > non-robust?", "lambda", "LM excluded"):
        table.add_column(column, justify="left" if column == "rows" else "right")
    for row in hypothesis["rows"]:
        r, n = row["robust"], row["non_robust"]
        label = row["sampling"] if row["modular"] is None else "  " + MODULAR_LABELS[row["modular"]]
        table.add_row(escape(label), f"{r['total']}/{n['total']}", fmt(r["Acc"]), fmt(n["Acc"]),
                      _yes(row["acc_separates"]), fmt(r["R"]), fmt(n["R"]), _yes(row["r_separates"]),
                      f"{fmt(r['lambda'], 2)}/{fmt(n['lambda'], 2)}",
                      "" if row["modular"] is None else str(row["excluded_lm"]))
    return table


def _yes(flag: bool | None) -> str:
    return "-" if flag is None else "yes" if flag else "no"


COMMANDS = [report_command]
