"""Small HTML building blocks: escaped text, numbers, tables and sections.

Every string that reaches the page goes through :func:`esc` (``html.escape``), so text from a model, a
dataset or a config (answers, questions, system names) can never become markup.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from typing import Any

DASH = "&ndash;"


def esc(value: Any) -> str:
    """``value`` as HTML-escaped text (quotes included)."""
    return html.escape(str(value), quote=True)


def num(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals, an int as is, a dash for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if isinstance(value, bool):
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def interval(low: float | None, high: float | None, digits: int = 3, signed: bool = False) -> str:
    """``[low, high]``, or a dash without an interval."""
    if low is None or high is None:
        return DASH
    spec = f"+.{digits}f" if signed else f".{digits}f"
    return f"[{low:{spec}}, {high:{spec}}]"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, caption: str = "", css: str = "") -> str:
    """A table; ``headers`` are plain text (escaped here), cells are HTML already escaped by the caller."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    cls = f' class="{esc(css)}"' if css else ""
    return f"<table{cls}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def section(anchor: str, title: str, body: str, legend: str = "") -> str:
    """A titled section with an optional legend line (plain text, escaped)."""
    note = f'<p class="legend">{esc(legend)}</p>' if legend else ""
    return f'<section id="{esc(anchor)}"><h2>{esc(title)}</h2>{note}{body}</section>'


def note(text: str) -> str:
    """A paragraph of plain text (escaped)."""
    return f'<p class="note">{esc(text)}</p>'


def json_script(element_id: str, data: Any) -> str:
    """``data`` as a ``<script type="application/json">`` block that no string inside can break out of:
    ``<``, ``>`` and ``&`` become JSON unicode escapes, so ``</script>`` or ``<!--`` in the data stay text."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'
