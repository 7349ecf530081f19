"""Wide tables at 80 columns (issue 38, item 10): every part of a split table repeats the columns that identify
its rows, and no name is cut mid-word: a cell wraps at a word boundary, or its column gets the room."""

from __future__ import annotations

import re

from rich.console import Console

from ragassay.cli.render import Column, Table, print_rich


def rendered(table: Table, width: int = 80) -> str:
    out = Console(width=width, record=True, highlight=False)
    print_rich(out, table)
    return out.export_text()


def cells(text: str) -> list[list[str]]:
    """The cells of every body and header line of the boxed tables in ``text``."""
    return [[cell.strip() for cell in re.split("[│┃]", line)[1:-1]] for line in text.splitlines() if line[:1] in "│┃"]


def column_cells(text: str, header: str) -> list[list[str]]:
    """Per part of a split table: the cells of the column headed ``header`` (one entry per line, wrapped
    continuations included)."""
    parts, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("┃") and header in [c.strip() for c in re.split("┃", line)[1:-1]]:
            index = [c.strip() for c in re.split("┃", line)[1:-1]].index(header)
            body = []
            for follow in lines[i + 1 :]:
                if follow.startswith("└"):
                    break
                if follow.startswith("│"):
                    body.append([c.strip() for c in re.split("│", follow)[1:-1]][index])
            parts.append(body)
    return parts


def breakdown_like() -> Table:
    """The breakdown's shape, with a long group name and a wide interval, so it splits at 80 columns."""
    rows = [
        {"group": group, "system": system, "metric": metric, "n": 5, "share": 0.5, "mean": 0.8, "ci": "[0.2, 1.0]"}
        for group in ("counterfactual_following", "short")
        for system in ("keyword", "bm25")
        for metric in ("token_recall", "judge:match")
    ]
    columns = [
        Column("group"),
        Column("system"),
        Column("metric"),
        Column("n", numeric=True),
        Column("share", numeric=True),
        Column("mean", numeric=True),
        Column("ci", header="95% CI of the mean, bootstrap BCa"),
    ]
    return Table("breakdown", columns, rows, id_columns=("group", "system", "metric"))


def test_every_part_of_a_split_table_repeats_the_identifying_columns():
    table = breakdown_like()
    text = rendered(table)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "breakdown (2/2)" in text
    for header in ("group", "system", "metric"):
        parts = column_cells(text, header)
        assert len(parts) == 2, header  # the second part has the system and the metric of its rows too
        assert parts[0] == parts[1]
    systems = [cell for cell in column_cells(text, "system")[1] if cell]
    assert systems == [row["system"] for row in table.rows]


def test_names_are_never_cut_mid_word_at_80_columns():
    text = rendered(breakdown_like())
    words = {word for line in cells(text) for cell in line for word in cell.split()}
    assert "counterfactual_following" in words and "token_recall" in words
    for fragment in ("counterfactual_follow", "syste", "keywo"):
        assert fragment not in words


def test_a_text_header_wider_than_its_values_does_not_squeeze_the_first_column():
    # the cost view of a run without model calls: its '95% CI' column of '-' made rich cut 'system' and 'keyword'
    numbers = ["quality", "tokens in", "tokens out", "calls", "cost", "latency s", "p95 s", "eval cost", "quality/$"]
    columns = [Column("system"), Column("quality", numeric=True), Column("95% CI", show=lambda r: "-")]
    columns += [Column(name, numeric=True, show=lambda r: "$0.0000") for name in numbers[1:]]
    columns += [Column("tokens saved", numeric=True, show=lambda r: "baseline"), Column("frontier")]
    rows = [{"system": name, "quality": 0.0, "frontier": "no"} for name in ("keyword", "bm25")]
    text = rendered(Table("cost view of run 7aab1ba1f307 (baseline keyword)", columns, rows))
    words = {word for line in cells(text) for cell in line for word in cell.split()}
    assert {"system", "keyword", "bm25", "95%", "CI"} <= words and not {"syste", "keywo", "m", "rd"} & words
    assert all(len(line) <= 80 for line in text.splitlines())


def test_a_word_longer_than_the_limit_still_folds_and_fits():
    table = Table("t", [Column("name"), Column("text")], [{"name": "a", "text": "x" * 120}])
    text = rendered(table)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "".join(c[1] for c in cells(text)[1:]) == "x" * 120


def test_blocks_are_headed_by_every_identifying_value():
    table = Table(
        "t",
        [Column("system"), Column("metric"), Column("cell", numeric=True, show=lambda r: "x" * 70)],
        [{"system": "bm25", "metric": "judge:match"}],
        id_columns=("system", "metric"),
    )
    text = rendered(table, width=40)
    assert "-- bm25 / judge:match" in text and "cell: " + "x" * 70 in text.replace("\n", "")


def test_a_long_path_wraps_after_a_slash_and_does_not_take_a_part_of_its_own():
    # a run's config path, longer than a text column's budget: it wraps after a slash, as it did before names got
    # the room, and the description column stays in the same part
    path = "/tmp/same-outputs/base/top_k/ragassay.toml"
    columns = [Column("run"), Column("created"), Column("project"), Column("state"), Column("systems")]
    columns += [Column("samples", numeric=True), Column("outputs", numeric=True), Column("failed", numeric=True)]
    columns += [Column("config"), Column("description")]
    row = {"run": "8b821b2d6543b8b4", "created": "2026-11-27 13:50", "project": "top_k", "state": "complete"}
    row |= {"systems": "a, b", "samples": 7, "outputs": 21, "failed": 0, "config": path, "description": ""}
    text = rendered(Table("runs", columns, [row]))
    assert "runs (2/2)" in text and "runs (3/" not in text
    config = [cell for cell in column_cells(text, "config")[0] if cell]
    assert "".join(config) == path and all(line.endswith("/") for line in config[:-1])
