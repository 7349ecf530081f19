"""The tables of ``ragassay meta-eval`` against people's labels (ragassay.analysis.meta_eval_people): one
agreement table per rubric (judge, statistic, value [95% interval], n), the ceiling (people among themselves) and,
for binary rubrics, the corrected (PPI) estimates. Rendering only; every number comes from the analysis."""

from __future__ import annotations

from ..analysis.jsonable import jsonable
from .render import Column, Table

NOTES = {
    "binary": "truth = the majority of each item's labels; balanced accuracy = (recall + specificity) / 2",
    "ordinal": "each person's label is one observation; weighted kappa: quadratic weights, a judge score in [0, 1] "
    "put on the rubric's scale (min + s (max - min), nearest value)",
    "pairwise": "a pair is one item whichever answer was shown first: (a, b) in name order, each preference read as "
    "rating b against a; judge: score(b) - score(a) vs the preference; 'label': each person's label one "
    "observation (RAGChecker's protocol), 'item_mean': the mean label per item",
}


def show_estimate(row: dict) -> str:
    """``value [low, high]``, the value alone without an interval, '-' when undefined."""
    if row.get("value") is None:
        return "-"
    if row.get("low") is None:
        return f"{row['value']:.3f}"
    return f"{row['value']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"


def _columns(first: str) -> list[Column]:
    return [
        Column("judge", header=first),
        Column("statistic"),
        Column("value", header="value [95% CI]", numeric=True, show=show_estimate),
        Column("low", in_text=False),
        Column("high", in_text=False),
        Column("n", numeric=True),
        Column("unit", in_text=False),
        Column("reason", in_text=False),
        Column("rubric", in_text=False),
    ]


def _undefined(rows: list[dict]) -> list[str]:
    return [f"'-' {row['judge']} {row['statistic']}: {row['reason']}" for row in rows if row["value"] is None]


def agreement_tables(result) -> list[Table]:
    """Per rubric: the judges' agreement with people, then the people's agreement among themselves."""
    tables = []
    for report in result.rubrics:
        rubric = report.rubric
        head = f"rubric {rubric.name} ({rubric.kind}), run {result.run_id[:8]}"
        rows = [a.as_row() for a in report.agreement]
        notes = [
            f"{report.labels} labels of {report.items} items by {len(report.annotators)} annotators "
            f"({', '.join(report.annotators)}); source {result.source}",
            NOTES[rubric.kind] + "; [95% percentile-bootstrap interval, items resampled]",
            *report.notes,
            *_undefined(rows),
        ]
        tables.append(Table(f"judges against people, {head}", _columns("judge"), rows, notes=notes))
        ceiling = [a.as_row() for a in report.ceiling]
        note = "the ceiling: how far people agree with each other (Cohen's kappa per pair, Krippendorff's alpha" + (
            "; Pearson and Spearman of the preferences per pair, RAGChecker's human-human figures)"
            if rubric.kind == "pairwise"
            else ")"
        )
        tables.append(
            Table(
                f"people among themselves, {head}", _columns("annotators"), ceiling, notes=[note, *_undefined(ceiling)]
            )
        )
    return tables


def corrected_tables(result, table_of) -> list[Table]:
    """The corrected (PPI) estimates of each binary rubric, drawn by ``table_of`` (the meta-eval table)."""
    return [table_of([jsonable(c) for c in r.corrected]) for r in result.rubrics if r.corrected]


def csv_table(result, which: str) -> Table:
    """One table over every rubric for csv: ``detectors`` (the judges), ``ceiling`` or ``corrected``."""
    if which == "corrected":
        rows = [{"rubric": r.rubric.name, **jsonable(c)} for r in result.rubrics for c in r.corrected]
        keys = list(rows[0]) if rows else ["rubric", "judge", "system"]
        return Table("corrected estimates", [Column(k) for k in keys], rows)
    rows = [a.as_row() for r in result.rubrics for a in (r.ceiling if which == "ceiling" else r.agreement)]
    return Table(
        which,
        [Column(k) for k in ("rubric", "judge", "statistic", "value", "low", "high", "n", "unit", "reason")],
        rows,
    )


def people_data(result) -> dict:
    """The documented JSON structure of a meta-evaluation against people."""
    return {
        "run": result.run_id,
        "truth": result.source,
        "rubrics": [
            {
                "rubric": r.rubric.name,
                "kind": r.rubric.kind,
                "scale": list(r.rubric.values),
                "annotators": r.annotators,
                "items": r.items,
                "labels": r.labels,
                "agreement": [a.as_row() for a in r.agreement],
                "ceiling": [a.as_row() for a in r.ceiling],
                "corrected": jsonable(r.corrected),
                "notes": r.notes,
            }
            for r in result.rubrics
        ],
    }
