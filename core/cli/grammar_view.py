"""Rendering the GRAMMAR section of a report (:class:`ragassay.analysis.report.GrammarReport`) in plain words.

The paper's symbols (Eq. 1, Eq. 2, lambda) stay in docs/grammar.md; the tables name the ideas.
"""

from __future__ import annotations

from .render import Column, Table, esc

GROUPS_TITLE = "semantic groups: one query logic asked in several phrasings"
GROUP_NOTES = [
    "robust: every phrasing answered correctly; non-robust: some phrasings answered correctly; gap: no phrasing "
    "answered correctly (what the knowledge base or the system cannot answer)",
    "accuracy: share of samples answered correctly; robustness: share answered correctly outside gap groups; "
    "in gaps: share of samples in gap groups; knowledge: share of groups that are not gaps (docs/grammar.md)",
]


def grammar_tables(report) -> list[Table]:
    """The groups table, the blame table, then each system's hypothesis tables."""
    tables = [groups_table(report), blame_table(report)]
    for system in report.systems:
        tables += [hypothesis_table(system.system, h) for h in system.hypotheses]
    return tables


def print_grammar(out, report) -> None:
    """The GRAMMAR section to a rich console."""
    from .render import emit

    out.print(
        f"[bold]GRAMMAR section[/]: correct = judge '{esc(report.judge)}'"
        + (
            f"; {report.ungrouped_samples} samples without a group_id form a group each"
            if report.ungrouped_samples
            else ""
        ),
        highlight=False,
    )
    tables = grammar_tables(report)
    emit(out, tables[:2], "rich")
    for system in report.systems:
        for example in system.gap_examples[:3]:
            out.print(f"  gap group of {esc(system.system)}: {esc(example.sql or example.group_id)}", highlight=False)
    emit(out, tables[2:], "rich")
    if not report.settings.hypotheses:
        out.print(esc("No hypothesis configured: add [[analysis.hypotheses]] to the config (see docs/grammar.md)."))


def groups_table(report) -> Table:
    keys = {
        "samples": "samples",
        "groups": "groups",
        "robust": "robust groups",
        "non-robust": "non-robust groups",
        "gap": "gap groups",
        "knowledge": "knowledge",
        "accuracy": "accuracy",
        "robustness": "robustness",
        "in gaps": "in gaps",
    }
    columns = [Column("system")] + [Column(k, header=h, numeric=True) for k, h in keys.items()]
    columns.append(Column("excluded"))
    rows = []
    for system in report.systems:
        o = system.overall
        rows.append(
            {
                "system": system.system,
                "samples": o.total,
                "groups": sum(o.groups.values()),
                "robust": o.groups.get("robust", 0),
                "non-robust": o.groups.get("non-robust", 0),
                "gap": o.groups.get("gap", 0),
                "knowledge": o.knowledge_accuracy,
                "accuracy": o.accuracy,
                "robustness": o.robustness,
                "in gaps": o.gap_share,
                "excluded": ", ".join(f"{n} {k}" for k, n in system.excluded.items() if n) or "-",
            }
        )
    return Table(GROUPS_TITLE, columns, rows, GROUP_NOTES)


def blame_table(report) -> Table:
    headers = {
        "wrong": "wrong answers",
        "in gaps": "in gap groups",
        "lm": "LM",
        "retrieval": "retrieval",
        "undetermined": "undetermined",
        "retrieval accuracy": "retrieval accuracy",
        "retrieval robustness": "retrieval robustness",
        "gt lm": "by reference: LM",
        "gt retrieval": "by reference: retrieval",
    }
    columns = [Column("system")] + [Column(k, header=h, numeric=True) for k, h in headers.items()]
    rows = []
    for system in report.systems:
        o, blame, truth = system.overall, system.blame, system.blame_ground_truth
        rows.append(
            {
                "system": system.system,
                "wrong": o.total - o.correct,
                "in gaps": o.gap_total,
                "lm": blame.lm,
                "retrieval": blame.retrieval,
                "undetermined": blame.undetermined,
                "retrieval accuracy": system.retrieval_only.accuracy,
                "retrieval robustness": system.retrieval_only.robustness,
                "gt lm": None if truth is None else truth.lm,
                "gt retrieval": None if truth is None else truth.retrieval,
            }
        )
    notes = [
        "LM / retrieval / undetermined: wrong answers in non-robust groups, blamed on the language model when they "
        "retrieved the same documents as a correct phrasing of their group, else on retrieval",
        "retrieval accuracy and robustness: with the LM-blamed answers left out; by reference: every wrong answer, "
        "blamed on the LM when it retrieved all of its reference documents (- where samples name none)",
    ]
    return Table("which module the wrong answers are blamed on", columns, rows, notes)


def hypothesis_table(system: str, hypothesis) -> Table:
    from ..analysis.hypotheses import MODULAR_LABELS

    robust, non_robust = ", ".join(map(str, hypothesis.robust)), ", ".join(map(str, hypothesis.non_robust))
    title = (
        f"{system}: hypothesis '{hypothesis.name}' ({hypothesis.attribute}: expected robust = {robust}, "
        f"expected non-robust = {non_robust})"
    )
    columns = [
        Column("rows"),
        Column("n", numeric=True, show=lambda r: f"{r['n robust']}/{r['n non-robust']}", in_data=False),
        Column("n robust", numeric=True, in_text=False),
        Column("n non-robust", numeric=True, in_text=False),
        Column("accuracy robust", numeric=True),
        Column("accuracy non-robust", numeric=True),
        Column("accuracy: robust higher?"),
        *_difference_columns("accuracy"),
        Column("robustness robust", numeric=True),
        Column("robustness non-robust", numeric=True),
        Column("robustness: robust higher?"),
        *_difference_columns("robustness"),
        Column(
            "in gaps",
            numeric=True,
            show=lambda r: f"{_fmt(r['in gaps robust'], 2)}/{_fmt(r['in gaps non-robust'], 2)}",
            in_data=False,
        ),
        Column("in gaps robust", numeric=True, in_text=False),
        Column("in gaps non-robust", numeric=True, in_text=False),
        Column("LM excluded", numeric=True),
    ]
    rows = []
    for row in hypothesis.rows:
        r, n = row.robust, row.non_robust
        rows.append(
            {
                "rows": row.sampling if row.modular is None else "  " + MODULAR_LABELS[row.modular],
                "n robust": r.total,
                "n non-robust": n.total,
                "accuracy robust": r.accuracy,
                "accuracy non-robust": n.accuracy,
                "accuracy: robust higher?": _answer(row.acc_test),
                **_difference_cells("accuracy", row.acc_test),
                "robustness robust": r.robustness,
                "robustness non-robust": n.robustness,
                "robustness: robust higher?": _answer(row.r_test),
                **_difference_cells("robustness", row.r_test),
                "in gaps robust": r.gap_share,
                "in gaps non-robust": n.gap_share,
                "LM excluded": None if row.modular is None else row.excluded_lm,
            }
        )
    notes = [
        "robust higher?: yes / no when the 95% bootstrap interval of the difference (robust - non-robust) lies "
        "above / below 0, not detectable when it holds 0; - without an interval (docs/grammar.md)"
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


def _difference_cells(metric: str, test) -> dict:
    return {
        f"{metric} diff": None if test is None else test.difference,
        f"{metric} diff low": None if test is None else test.ci_low,
        f"{metric} diff high": None if test is None else test.ci_high,
        f"{metric} no interval": None if test is None else test.reason,
    }


def _fmt(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _answer(test) -> str:
    return "-" if test is None or test.answer is None else test.answer
