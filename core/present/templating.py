"""The one Jinja2 environment of ``ragassay serve`` and the HTML report: autoescaped templates, number filters.

Autoescaping is always on: every value a template prints is HTML-escaped unless it is :class:`markupsafe.Markup`
(only :func:`asset` and the inline SVG plots are), so a question, an answer or a system name can never become
markup. Numbers are formatted by the filters below, the same in both places.

Templates live in ``templates/``, the stylesheet and the scripts in ``static/`` (served by the app, inlined in the
self-contained report by :func:`asset`).
"""

from __future__ import annotations

import functools
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
DASH = "\u2013"  # an unknown value, never a zero


@functools.cache
def environment():
    """The shared :class:`jinja2.Environment` (autoescape on, undefined names are errors)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(num=num, interval=interval, signed=signed, pvalue=pvalue, when=when, urlq=urlq)
    env.globals.update(asset=asset, DASH=DASH)
    from . import blocks

    for name in ("cell", "table", "note", "items", "plot", "section"):
        kind = getattr(blocks, name.capitalize())
        env.tests[name] = lambda value, kind=kind: isinstance(value, kind)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "separators": (",", ":"), "allow_nan": False}
    return env


def render_text(template: str, **context: Any) -> str:
    """``template`` rendered with ``context``, as a string."""
    return environment().get_template(template).render(**context)


def section_html(section: Any) -> str:
    """One :class:`ragassay.present.blocks.Section` as HTML, exactly as the report and the pages render it."""
    return str(environment().get_template("sections.html").module.section(section))


def render(request, template: str, *, status_code: int = 200, **context: Any):
    """A :class:`starlette.responses.HTMLResponse` of ``template`` for ``request``.

    The template also sees ``request`` and ``root`` (the app's mount path, to build links: ``{{ root }}/runs``).
    """
    from starlette.responses import HTMLResponse

    root = request.scope.get("root_path", "").rstrip("/")
    page = render_text(template, request=request, root=root, standalone=False, **context)
    return HTMLResponse(page, status_code=status_code)


@functools.cache
def asset(name: str):
    """The text of ``static/<name>`` as markup, for inlining into a self-contained page (the HTML report)."""
    from markupsafe import Markup

    text = (STATIC / name).read_text(encoding="utf-8")
    if "</" in text:  # inlined in <style> or <script>: no closing tag may appear inside
        raise ValueError(f"static/{name} contains '</' and cannot be inlined")
    return Markup(text)


def num(value: Any, digits: int = 3) -> str:
    """A number with ``digits`` decimals, an int with thousands separators, a dash for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def signed(value: Any, digits: int = 3) -> str:
    """A difference with its sign (``+0.125``), a dash for None."""
    return DASH if value is None else f"{value:+.{digits}f}"


def interval(low: float | None, high: float | None, digits: int = 3, signed: bool = False) -> str:
    """``[low, high]``; a dash without an interval."""
    spec = f"+.{digits}f" if signed else f".{digits}f"
    if low is None or high is None:
        return DASH
    return f"[{low:{spec}}, {high:{spec}}]"


def pvalue(p: float | None) -> str:
    """A p-value with 3 decimals, ``< 0.001`` below that."""
    if p is None:
        return DASH
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def when(timestamp: float | None) -> str:
    """An epoch time as ``YYYY-MM-DD HH:MM UTC``."""
    if timestamp is None:
        return DASH
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def urlq(value: Any) -> str:
    """``value`` quoted as one URL path segment or query value (a ``/`` in a question id included)."""
    return quote(str(value), safe="")
