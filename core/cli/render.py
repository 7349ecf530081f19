"""How every command prints: one escaping helper and one table abstraction with four output formats.

A :class:`Table` is columns plus rows of plain values (str, int, float, None). It renders as

* ``rich``: a rich table readable at 80 columns: numeric columns never wrap (a number is never cut to ``0.…``),
  text wraps at word boundaries (a word is never cut unless it is longer than WORD_LIMIT), long headers wrap,
  and a table wider than the console is split into several narrower tables that each repeat the columns that
  identify a row (:attr:`Table.id_columns`, by default the first column), or, when even one more column does
  not fit beside them, into one block per row;
* ``json``: a list of objects (a :class:`Table` with ``data=...`` prints that structure instead);
* ``csv``: one table's header and rows, written by the :mod:`csv` module (a command with several tables takes
  ``--table NAME``);
* ``markdown``: a pipe table, ``|`` escaped.

Every string that comes from a user, a config or a model goes through :func:`esc` before rich renders it:
rich would read ``depth[top_k=1|3|5]`` or ``[n]`` as markup and drop it. Control characters (an ESC sequence
in a dataset, an answer or an endpoint's body) are shown as visible escapes in every format
(:func:`ragassay.text.terminal_safe`; json escapes them the JSON way).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re
import textwrap
from typing import Any

from ..present.tables import Column, Table, number_text  # noqa: F401 - re-exported: commands import them from here
from ..text import terminal_safe

FORMATS = ("rich", "json", "csv", "markdown")
HEADER_WIDTH = 16  # a numeric column's header wraps at this width when its values are narrower
TEXT_BUDGET = 20  # width a text column is given when deciding how to split a wide table
WORD_LIMIT = 40  # a word up to this long is never cut: its column gets the room (a longer one, a URL, folds)


def esc(value: Any) -> str:
    """``str(value)`` with rich markup escaped and control characters made visible: the one way user, config and
    model strings reach rich."""
    from rich.markup import escape

    return escape(terminal_safe(str(value)))


def emit(out, tables: list[Table], fmt: str, data: Any = None, *, compact: bool = False) -> None:
    """Print ``tables`` in ``fmt``: rich to the console ``out``, the others as plain text to stdout.

    With ``compact``, rich tables are drawn without box characters or colour (plain text for CI logs).

    json prints ``data`` when given (a command's documented structure), else the rows of the one table as a list
    of objects, or for several tables a list of ``{"title", "rows"}`` objects.
    """
    import click

    if fmt == "json":
        if data is None:
            data = (
                tables[0].records() if len(tables) == 1 else [{"title": t.title, "rows": t.records()} for t in tables]
            )
        click.echo(json_text(data))
    elif fmt == "csv":
        if len(tables) != 1:  # one table per invocation: a file pandas.read_csv reads as it is
            raise ValueError(f"csv writes exactly one table, {len(tables)} given: choose one with --table")
        click.echo(to_csv(tables[0]), nl=False)
    elif fmt == "markdown":
        click.echo("\n\n".join(to_markdown(t) for t in tables))
    else:
        for table in tables:
            print_rich(out, table, compact=compact)


def json_text(data: Any) -> str:
    """``data`` as indented JSON; DEL and the C1 controls, which JSON may leave raw, as ``\\u00XX`` escapes."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    return re.sub(r"[\x7f-\x9f]", lambda m: f"\\u{ord(m.group()):04x}", text)


def to_csv(table: Table) -> str:
    """Header and rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = [c for c in table.columns if c.in_data]
    writer.writerow([terminal_safe(c.title) for c in columns])
    for record in table.records():
        writer.writerow(["" if v is None else terminal_safe(v) if isinstance(v, str) else v for v in record.values()])
    return buffer.getvalue()


def to_markdown(table: Table) -> str:
    """A pipe table (``|`` and newlines in cells escaped) with the title in bold above and notes below."""
    columns = [c for c in table.columns if c.in_text]

    def cell(text: str) -> str:
        return terminal_safe(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", "<br>")

    lines = [
        f"**{cell(table.title)}**",
        "",
        "| " + " | ".join(cell(c.title) for c in columns) + " |",
        "| " + " | ".join("---:" if c.numeric else "---" for c in columns) + " |",
    ]
    for i, row in enumerate(table.rows):
        texts = [cell(c.text(row)) for c in columns]
        texts = [f"**{t}**" if (i, c.key) in table.emphasis and t else t for t, c in zip(texts, columns)]
        lines.append("| " + " | ".join(texts) + " |")
    lines += [""] + [terminal_safe(note) for note in table.notes] if table.notes else []
    return "\n".join(lines)


def print_rich(out, table: Table, *, compact: bool = False) -> None:
    """Print ``table`` readable at the console's width: split into parts that repeat the identifying columns
    (:meth:`Table.identifying`), or stacked when too wide; numbers never cut, words never cut mid-word (up to
    WORD_LIMIT characters); with ``compact``, without box characters or colour."""
    columns = [c for c in table.columns if c.in_text]
    texts = {c.key: [c.text(row) for row in table.rows] for c in columns}
    sizes = {c.key: _Size.of(c, texts[c.key], compact=False) for c in columns}
    if sum(_outer(s.base) for s in sizes.values()) + 1 > out.width:  # too wide with whole headers: wrap them, split
        sizes = {c.key: _Size.of(c, texts[c.key]) for c in columns}
    keys = table.identifying()
    rest = [c for c in columns if c not in keys]
    room = out.width - sum(_outer(sizes[c.key].base) for c in keys)
    groups = _split(rest, sizes, room) if rest else ([[]] if room >= 1 else None)
    if groups is None:
        _print_blocks(out, table, columns, keys, texts)
    else:
        for number, group in enumerate(groups):
            suffix = f" ({number + 1}/{len(groups)})" if len(groups) > 1 else ""
            part = [c for c in columns if c in keys or c in group]
            widths = _fit(part, sizes, out.width)
            out.print(_rich_table(table, part, texts, widths, suffix, compact))
    for note in table.notes:
        out.print(esc(note), highlight=False)


@dataclasses.dataclass
class _Size:
    """How wide a column may be: ``natural`` (its widest line), ``floor`` (below it a word or number would be
    cut) and ``base`` (what it is given when deciding how to split a wide table)."""

    base: int
    natural: int
    floor: int

    @classmethod
    def of(cls, column: Column, texts: list[str], compact: bool = True) -> _Size:
        """Numeric columns: their widest value (and header: whole, or wrapped at HEADER_WIDTH when ``compact``),
        never less. Text columns: their widest line, at most TEXT_BUDGET when splitting, never less than their
        longest word (at most WORD_LIMIT; header words count)."""
        lines = [terminal_safe(line) for text in texts for line in text.splitlines() or [""]]
        widest = max((_cells(line) for line in lines), default=0)
        title = terminal_safe(column.title)
        header = max((_cells(word) for word in title.split()), default=1)
        if column.numeric:
            width = max(widest, min(header, HEADER_WIDTH) if compact else _cells(title), 1)
            return cls(width, width, width)
        words = [part for line in lines for word in line.split() for part in _segments(word)] + title.split()
        floor = max(min(max((_cells(word) for word in words), default=1), WORD_LIMIT), 1)
        natural = max(widest, header if compact else _cells(title), floor)
        return cls(max(min(natural, TEXT_BUDGET), floor), natural, floor)


def _segments(word: str) -> list[str]:
    """A path's segments, each with its ``/`` (``a/b.toml`` -> ``a/``, ``b.toml``): a path may wrap after a slash;
    any other word is one segment."""
    return _SEGMENT.findall(word) or [word]


_SEGMENT = re.compile(r"[^/]*/|[^/]+")


def _break_paths(text: str, width: int) -> str:
    """``text`` with each path longer than ``width`` broken after a slash into lines that fit (rich wraps at
    spaces only, and would cut the path anywhere)."""
    if "/" not in text or all(_cells(word) <= width for word in text.split()):
        return text

    def pieces(word: str) -> str:
        if _cells(word) <= width:
            return word
        lines = [""]
        for segment in _segments(word):
            if lines[-1] and _cells(lines[-1] + segment) > width:
                lines.append("")
            lines[-1] += segment
        return "\n".join(lines)

    return "\n".join(" ".join(pieces(word) for word in line.split(" ")) for line in text.split("\n"))


def _cells(text: str) -> int:
    """Terminal cells ``text`` takes (a wide character takes two)."""
    from rich.cells import cell_len

    return cell_len(text)


def _outer(width: int) -> int:
    """A column's width in a boxed rich table: the content, one space each side, one border."""
    return width + 3


def _split(columns: list[Column], sizes: dict[str, _Size], room: int) -> list[list[Column]] | None:
    """Group ``columns`` so each group fits in ``room`` characters; None when one column alone does not fit."""
    groups: list[list[Column]] = [[]]
    used = 1
    for column in columns:
        need = _outer(sizes[column.key].base)
        if need + 1 > room:
            return None
        if groups[-1] and used + need > room:
            groups.append([])
            used = 1
        groups[-1].append(column)
        used += need
    return groups


def _fit(columns: list[Column], sizes: dict[str, _Size], width: int) -> dict[str, int]:
    """Each column's width in a table of at most ``width`` characters: its natural width where they all fit,
    else the widest text columns narrowed first, never below their floor (what rich does, without cutting a
    word)."""
    widths = {c.key: sizes[c.key].natural for c in columns}
    excess = sum(_outer(w) for w in widths.values()) + 1 - width
    while excess > 0:
        narrowable = [c.key for c in columns if widths[c.key] > sizes[c.key].floor]
        if not narrowable:
            break
        widest = max(narrowable, key=lambda key: widths[key])
        widths[widest] -= 1
        excess -= 1
    return widths


def _rich_table(table: Table, columns: list[Column], texts: dict, widths: dict, suffix: str, compact: bool = False):
    from rich.table import Table as RichTable

    title = table.title + suffix
    rich = RichTable(
        title=esc(title), title_justify="left", box=None if compact else _default_box(), min_width=min(len(title), 80)
    )
    if compact:
        rich.title_style = rich.header_style = ""
    for column in columns:
        header = column.title
        if column.numeric:
            header = "\n".join(textwrap.wrap(header, widths[column.key], break_long_words=True)) or header
        rich.add_column(
            esc(header),
            justify="right" if column.numeric else "left",
            no_wrap=column.numeric,
            overflow="fold",
            width=widths[column.key],
        )
    for i in range(len(table.rows)):
        cells = []
        for column in columns:
            text = texts[column.key][i]
            text = esc(text if column.numeric else _break_paths(text, widths[column.key]))
            emphasised = (i, column.key) in table.emphasis and text and not compact
            cells.append(f"[bold green]{text}[/]" if emphasised else text)
        rich.add_row(*cells)
    return rich


def _default_box():
    from rich import box

    return box.HEAVY_HEAD  # rich.table.Table's default


def _print_blocks(out, table: Table, columns: list[Column], keys: list[Column], texts: dict) -> None:
    """One block per row, headed by its identifying values, then 'header: value' lines: for tables whose
    columns do not fit even one at a time beside the identifying ones."""
    out.print(f"[bold]{esc(table.title)}[/]")
    for i in range(len(table.rows)):
        out.print(f"[bold]-- {esc(' / '.join(texts[c.key][i] for c in keys))}[/]", highlight=False)
        for column in columns:
            if column not in keys:
                out.print(f"{esc(column.title)}: {esc(texts[column.key][i])}", highlight=False)
