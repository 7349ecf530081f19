"""What a page section is made of, as plain data the templates render (``templates/sections.html``).

The report (:mod:`ragassay.present.html_report`) and the app build their sections from these; no Python code builds
markup. Text in any field is escaped when rendered; only :attr:`Plot.svg` (an SVG that matplotlib drew) is
markup. They are on the public facade (``from ragassay import Section, Table, Note``) for the sections that
plugins register (:class:`ragassay.RunSection`).
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Cell:
    """A table cell: ``text`` (bold with ``cls="best"``, coloured with ``cls="verdict v-better"``...), then a
    ``small`` note (an interval, a reason) with an optional hover ``title``."""

    text: str
    small: str = ""
    cls: str = ""
    title: str = ""


@dataclasses.dataclass(frozen=True)
class Table:
    """A table: header texts, rows of cells (a :class:`Cell` or a plain value), CSS class, caption, notes below."""

    headers: list[str]
    rows: list[list[Any]]
    css: str = ""
    caption: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Note:
    """A paragraph of plain text."""

    text: str


@dataclasses.dataclass(frozen=True)
class Items:
    """A bulleted list of plain-text items (``empty`` when there is none)."""

    items: list[str]
    css: str = ""
    empty: str = ""


@dataclasses.dataclass(frozen=True)
class Plot:
    """An inline SVG plot (markup drawn by matplotlib, see :mod:`ragassay.present.sections.plots`): ``svg`` is a
    :class:`markupsafe.Markup` (a plain string is escaped, so it shows as text)."""

    svg: Any  # markupsafe.Markup


@dataclasses.dataclass(frozen=True)
class Section:
    """A titled section: ``anchor`` (its id in the page: a plugin's starts with the plugin's name), a legend line,
    then its parts in order (:class:`Table`, :class:`Note`, :class:`Items`, :class:`Plot`)."""

    anchor: str
    title: str
    parts: list[Any]
    legend: str = ""
