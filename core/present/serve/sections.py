"""What the run pages of ``ragassay serve`` compute: each page's sections as a function of the run at one version
(a :class:`ragassay.present.serve.cache.RunEntry`) and the page's settings, nothing of the request.

:func:`page` keeps a page's value under ``(kind, *args)`` in the entry with its recipe, so the preparer
(:mod:`.prepare`) can compute the same page for the run's next version before it is asked for;
:func:`default_pages` are the pages of a run as first opened (default settings, no filter).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

TABS = [("", "comparison"), ("breakdowns", "breakdowns"), ("cost", "cost and latency"), ("failures", "failures")]
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


def compared(entry, settings: tuple):
    """``compare`` of the run with ``settings``, computed once per run version (the comparison and cost pages
    share it)."""
    from ...analysis.comparison import compare

    return entry.get(("compare", settings), lambda: compare([entry.run()], **dict(settings)))


def comparison(entry, settings: tuple) -> list:
    """Verdicts, the comparison with intervals, and the paired verdicts against the baseline."""
    from ...analysis.sentences import verdict_sentences
    from ..sections.tables import comparison_section, pairs_section, verdict_section

    result = compared(entry, settings)
    verdicts = result.runs[0].verdicts
    return [
        verdict_section(verdicts, verdict_sentences(verdicts)),
        comparison_section(verdicts, result.hidden),
        pairs_section(verdicts),
    ]


def breakdowns(entry, seed: int) -> list:
    """Breakdowns by the declared sample fields with box plots, the metric correlation, the GRAMMAR view."""
    from ...analysis.breakdown import breakdown
    from ...analysis.report import breakdown_fields, grammar_or_reason
    from ..sections.breakdowns import breakdowns_section, correlation_section
    from ..sections.tables import grammar_section

    run = entry.run(payloads=True)
    results = [breakdown(run, field, seed=seed) for field in breakdown_fields(run)]
    grammar, reason = grammar_or_reason(run)
    return [breakdowns_section(run, results), correlation_section(run), grammar_section(grammar, reason)]


def cost(entry, settings: tuple) -> list:
    """The cost view and latency quantiles with the frontier (the latency intervals are compare's)."""
    from ...analysis.cost_view import cost_view
    from ...errors import RagassayError
    from ..sections.tables import cost_section, latency_section

    part = compared(entry, settings).runs[0]
    seed = dict(settings)["seed"]
    try:
        view = cost_view(entry.run(), baseline=part.verdicts.baseline, seed=seed, latency=part.latency)
        reason = ""
    except RagassayError as exc:
        view, reason = None, str(exc)
    return [cost_section(view, reason), latency_section(part)]


def robustness(entry, settings: tuple):
    """The robustness section, None for a run without a perturbed system."""
    from ..sections.robustness import robustness_section

    values = dict(settings)
    return robustness_section(entry.run(), values["alpha"], values["seed"])


def drift(entry, by: str, settings: tuple):
    """The drift section by ``day`` or ``week``, None for a run without a sample from a trace."""
    from ..sections.trend import trend_section

    values = dict(settings)
    return trend_section(entry.run(), values["alpha"], values["seed"], by)


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


def tabs(entry) -> list[tuple[str, str]]:
    """The tabs of the run of ``entry`` (:func:`tabs_of`), kept per version."""
    return entry.get("tabs", lambda: tabs_of(entry.run()))


def tabs_of(run) -> list[tuple[str, str]]:
    """The tabs of ``run``: robustness for a run with perturbed systems, drift for a run scored from traces."""
    from ...analysis.robustness import perturbations
    from ...analysis.trend import trace_starts

    found = TABS + ([("robustness", "robustness")] if perturbations(run) else [])
    return found + ([("drift", "drift")] if any(start is not None for start in trace_starts(run)) else [])


RECIPES: dict[str, Callable[..., Any]] = {
    "comparison": comparison,
    "breakdowns": breakdowns,
    "cost": cost,
    "robustness": robustness,
    "drift": drift,
    "failures": failures,
}


def default_pages(entry) -> list[tuple]:
    """(kind, *args) of the run's pages as first opened: comparison, cost, breakdowns, failures, and robustness
    and drift where the run has those tabs."""
    from .failures import Filters

    found = [("comparison", DEFAULT_SETTINGS), ("cost", DEFAULT_SETTINGS), ("breakdowns", 0), ("failures", Filters())]
    shown = {name for name, _ in tabs(entry)}
    found += [("robustness", DEFAULT_SETTINGS)] if "robustness" in shown else []
    return found + ([("drift", "day", DEFAULT_SETTINGS)] if "drift" in shown else [])
