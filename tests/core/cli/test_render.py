"""The rendering module on its own: escaping, splitting wide tables, whole numbers, csv and markdown."""

from __future__ import annotations

import csv
import io
import json

from rich.console import Console

from ragassay.cli.render import Column, Table, emit, esc, json_text, print_rich, to_csv, to_markdown


def wide_table() -> Table:
    metrics = [f"metric_number_{i}" for i in range(12)]
    rows = [
        {"system": name, **{m: 1 / (i + j + 3) for j, m in enumerate(metrics)}}
        for i, name in enumerate(["depth[top_k=1|3|5]", "a system with a very long name indeed"])
    ]
    return Table(
        "wide [test]",
        [Column("system")] + [Column(m, numeric=True, digits=6) for m in metrics],
        rows,
        ["legend: [n] means n"],
    )


def test_esc_keeps_markup_like_text():
    out = Console(width=80, record=True)
    out.print(esc("depth[top_k=1|3|5] and [bold]x[/] and [n]"))
    assert out.export_text().strip() == "depth[top_k=1|3|5] and [bold]x[/] and [n]"


def test_wide_table_is_split_never_cuts_a_number():
    table = wide_table()
    out = Console(width=80, record=True)
    print_rich(out, table)
    text = out.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text and "wide [test] (1/" in text and "legend: [n] means n" in text
    for row in table.rows:
        for column in table.columns[1:]:
            assert f"{row[column.key]:.6f}" in text
    assert text.count("depth[top_k=1|3|5]") >= 2  # the first column repeats in every part


def test_too_narrow_for_one_column_stacks_records():
    table = Table("t", [Column("system"), Column("cell", numeric=True, show=lambda r: "x" * 70)], [{"system": "s"}])
    out = Console(width=40, record=True)
    print_rich(out, table)
    assert "cell: " + "x" * 70 in out.export_text().replace("\n", "")


def test_markdown_escapes_pipes_and_csv_round_trips(capsys):
    table = wide_table()
    lines = to_markdown(table).splitlines()
    body = [line for line in lines if line.startswith("| depth")]
    assert body and body[0].startswith(r"| depth[top_k=1\|3\|5] |")
    assert all(line.replace("\\|", "").count("|") == 14 for line in lines if line.startswith("|"))
    emit(None, [table], "csv")
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows[0]["system"] == "depth[top_k=1|3|5]" and float(rows[0]["metric_number_0"]) == 1 / 3


def test_every_format_shows_control_characters_as_escapes():
    table = Table("t\x1b[2J", [Column("name"), Column("n", numeric=True)], [{"name": "a\x1b]0;x\x07|b", "n": 1}])
    table.notes.append("note\x1b[31m")
    assert esc("[b]\x1b[2J") == "\\[b]\\x1b[2J"
    assert "\x1b" not in to_markdown(table) and "a\\\\x1b]0;x\\\\x07\\|b" in to_markdown(table)
    assert list(csv.reader(io.StringIO(to_csv(table)))) == [["name", "n"], ["a\\x1b]0;x\\x07|b", "1"]]
    text = json_text({"s": "\x1b\x9b\x7f"})
    assert text == '{\n  "s": "\\u001b\\u009b\\u007f"\n}' and json.loads(text) == {"s": "\x1b\x9b\x7f"}
