"""Tables as plain data: columns plus rows of plain values (str, int, float, None), with notes.

The CLI prints them in four formats (:mod:`ragassay.cli.render`); the HTML report shows the same tables where a
command and the report share a view (e.g. the robustness profile, :mod:`ragassay.present.robustness_tables`). Nothing
here renders: no rich, no markup.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any


@dataclasses.dataclass
class Column:
    """One column: ``key`` in each row; how it is headed and shown in the text views (rich, markdown).

    ``show`` (row -> str) replaces the default text of a cell; columns with ``in_text=False`` only appear in
    json and csv (e.g. the ``n`` that ``show`` folds into a ``mean (n)`` cell), ``in_data=False`` only in text.
    """

    key: str
    header: str | None = None
    numeric: bool = False
    digits: int = 3
    show: Callable[[dict], str] | None = None
    in_text: bool = True
    in_data: bool = True

    @property
    def title(self) -> str:
        return self.key if self.header is None else self.header

    def text(self, row: dict) -> str:
        """The cell's text in rich and markdown output."""
        if self.show is not None:
            return self.show(row)
        return number_text(row.get(self.key), self.digits)


@dataclasses.dataclass
class Table:
    """A titled table of plain values, with notes (a legend, footnotes) printed under it.

    ``emphasis`` holds (row index, column key) pairs shown bold (e.g. the best value of a column);
    ``data``, when set, is what ``--format json`` prints instead of the rows (a command's documented JSON).
    ``id_columns`` names the columns that together identify a row (e.g. ``("group", "system", "metric")``;
    default: the first column shown in text): a table too wide for the terminal is split into parts that each
    repeat them.
    """

    title: str
    columns: list[Column]
    rows: list[dict]
    notes: list[str] = dataclasses.field(default_factory=list)
    emphasis: set[tuple[int, str]] = dataclasses.field(default_factory=set)
    id_columns: tuple[str, ...] = ()

    def identifying(self) -> list[Column]:
        """The columns shown in text that identify a row: those of ``id_columns``, else the first one."""
        shown = [c for c in self.columns if c.in_text]
        named = [c for c in shown if c.key in self.id_columns]
        return named or shown[:1]

    def records(self) -> list[dict]:
        """The rows as json/csv objects: data columns only, in column order."""
        keys = [c.key for c in self.columns if c.in_data]
        return [{key: row.get(key) for key in keys} for row in self.rows]


def number_text(value: Any, digits: int = 3) -> str:
    """A cell value as text: floats with ``digits`` decimals, None as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)
