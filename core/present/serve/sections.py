"""What the run pages of ``ragassay serve`` compute: each page's sections as a function of the run at one version
(a :class:`ragassay.present.serve.cache.RunEntry`) and the page's settings, nothing of the request.

The pages are those of the sections registered through ``register_sections``
(:class:`ragassay.present.sections.registered.Sections`: ragassay's own, then each plugin's); the failure browser's
rows (:mod:`.failures`) are the one page that is not made of sections.

:func:`page` keeps a page's value under ``(kind, *args)`` in the entry with its recipe, so the preparer
(:mod:`.prepare`) can compute the same page for the run's next version before it is asked for;
:func:`default_pages` are the pages of a run as first opened (default settings, no filter).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

DEFAULT_SETTINGS = (("alpha", 0.05), ("baseline", None), ("seed", 0))  # baseline, alpha and seed of compare


def settings_key(settings: dict) -> tuple:
    """The settings as a key (and as the argument of the recipes): sorted (name, value) pairs."""
    return tuple(sorted(settings.items()))


def page(entry, kind: str, *args: Hashable) -> Any:
    """The page ``kind`` of ``entry`` with ``args`` (see :data:`RECIPES`), computed once per run version."""
    return entry.page((kind, *args), recipe(kind, *args))


def recipe(kind: str, *args: Hashable) -> Callable[[Any], Any]:
    """How to compute the page ``kind`` with ``args`` from an entry (the run at any version)."""
    return lambda entry: RECIPES[kind](entry, *args)


def view(entry, settings: tuple, params: tuple = ()):
    """The :class:`ragassay.present.sections.registered.RunView` of ``entry``'s run: what its sections share is
    kept with the run's version (so every page of that version shares the comparison)."""
    from ..sections.registered import RunView

    return RunView(
        lambda payloads: entry.run(payloads=payloads),
        **dict(settings),
        params=dict(params),
        shared=lambda key, compute: entry.get(("shared", key), compute),
    )


def sections_page(entry, sections, name: str, settings: tuple, params: tuple = ()) -> list | None:
    """The sections of page ``name`` (:meth:`Sections.page`) with ``settings`` and the page's other query
    ``params``; None when none of them has anything to show for the run."""
    return sections.page(name, view(entry, settings, params))


def failures(entry, filters) -> list:
    """Every row of the failure browser that ``filters`` keep (any page), ordered."""
    from .failures import rows

    searched = entry.get(("search", filters.q), lambda: _searched(entry, filters.q)) if filters.q else None
    return rows(entry.run(), filters, searched)


def _searched(entry, text: str) -> set[tuple[str, str]]:
    """(system, question_id) of the stored outputs whose JSON contains ``text`` (case insensitive)."""
    import json

    needles = {text.casefold(), json.dumps(text, ensure_ascii=False)[1:-1].casefold()}
    found = set()
    store = entry.store
    if hasattr(store, "output_batches"):
        records = (r for batch in store.output_batches(entry.run_id, payloads=True) for r in batch)
    else:
        records = store.output_records(entry.run_id, payloads=True)
    for record in records:
        raw = (record[15] or "").casefold()
        if any(n in raw for n in needles):
            found.add((record[0], record[1]))
    return found


def tabs(entry, sections) -> list[tuple[str, str]]:
    """The tabs of the run of ``entry`` (:meth:`Sections.tabs`), kept per version."""
    return entry.get("tabs", lambda: sections.tabs(entry.run()))


RECIPES: dict[str, Callable[..., Any]] = {"sections": sections_page, "failures": failures}


def default_pages(entry, sections) -> list[tuple]:
    """(kind, *args) of the run's pages as first opened: each of its tabs with the default settings, the failure
    browser without a filter."""
    from .failures import Filters

    return [
        ("failures", Filters()) if name == "failures" else ("sections", sections, name, DEFAULT_SETTINGS, ())
        for name, _ in tabs(entry, sections)
    ]
