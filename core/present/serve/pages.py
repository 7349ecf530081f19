"""The pages of ``ragassay serve``: the same analyses and section data as the HTML report (nothing here
computes a statistic), on the run as stored now. Each request asks the run's version first and reuses the run
and the sections computed for that version (:mod:`.cache`), or reads and computes them again; the sample page
reads only its sample (:func:`ragassay.results.read_sample`).

- ``/``: the runs; ``/runs/{run}``: verdicts, comparison, paired verdicts; ``/runs/{run}/breakdowns``:
  breakdowns with box plots, metric correlation, GRAMMAR; ``/runs/{run}/cost``: cost and latency with the
  frontier; ``/runs/{run}/robustness``: the robustness profile; ``/runs/{run}/failures``: the failure browser
  (:mod:`.failures`); ``/runs/{run}/samples/{question_id}``: one sample with every system's output.

The comparison pages take ``baseline``, ``alpha`` and ``seed`` as query parameters (as ``compare`` takes them).
"""

from __future__ import annotations

import dataclasses

from starlette.exceptions import HTTPException
from starlette.routing import Route

from ..templating import render
from . import sections as sections_of
from .sections import page, settings_key


def runs_page(request):
    """Every stored run, newest first: state, systems, samples, outputs, failures (their headers only)."""
    from ...results import read_run_headers

    return render(request, "runs.html", title="ragassay runs", runs=read_run_headers(request.app.state.store))


def _entry(request):
    """The run of the request's path at its current version (:class:`ragassay.present.serve.cache.RunEntry`)."""
    return request.app.state.runs.entry(request.path_params["run"])


def _settings(request, run) -> tuple:
    """baseline, alpha and seed from the query (:func:`.sections.settings_key`); a baseline that is not a
    system is a ConfigError (a 400)."""
    from ...errors import ConfigError

    params = request.query_params
    baseline = params.get("baseline") or None
    if baseline is not None and baseline not in run.systems:
        raise ConfigError(f"baseline {baseline!r} is not a system of the run: {', '.join(run.systems)}")
    try:
        alpha, seed = float(params.get("alpha", "0.05")), int(params.get("seed", "0"))
    except ValueError:
        raise ConfigError("alpha takes a number in (0, 1) and seed an integer") from None
    if not 0 < alpha < 1:
        raise ConfigError(f"alpha must be in (0, 1), not {alpha}")
    return settings_key({"baseline": baseline, "alpha": alpha, "seed": seed})


def _page(request, entry, tab: str, sections: list, **context):
    """The page of ``entry``'s run, its sections computed; the preparer (:mod:`.prepare`, when the app runs one)
    then prepares the run's other pages at that version (after this page, so as not to slow it down)."""
    preparer = getattr(request.app.state, "preparer", None)
    if preparer is not None:
        preparer.viewed(entry.run_id)
    run = entry.run()
    title = f"Run {run.id[:12]} ({run.info.project})"
    tabs = sections_of.tabs(entry)
    return render(request, "run.html", title=title, run=run, tab=tab, tabs=tabs, sections=sections, **context)


def comparison_page(request):
    """Verdicts, the comparison with intervals, and the paired verdicts against the baseline."""
    entry = _entry(request)
    return _page(request, entry, "", page(entry, "comparison", _settings(request, entry.run())))


def breakdowns_page(request):
    """Breakdowns by the declared sample fields with box plots, the metric correlation, the GRAMMAR view."""
    entry = _entry(request)
    seed = dict(_settings(request, entry.run()))["seed"]
    return _page(request, entry, "breakdowns", page(entry, "breakdowns", seed))


def cost_page(request):
    """The cost view and latency quantiles with the quality-cost-latency frontier."""
    entry = _entry(request)
    return _page(request, entry, "cost", page(entry, "cost", _settings(request, entry.run())))


def robustness_page(request):
    """The robustness profile of a run with perturbed systems."""
    entry = _entry(request)
    section = page(entry, "robustness", _settings(request, entry.run()))
    if section is None:
        raise HTTPException(404, f"run {entry.run_id[:12]} has no perturbed system: no robustness profile")
    return _page(request, entry, "robustness", [section])


def drift_page(request):
    """Drift over time of a run scored from traces: per-window means with intervals, windows flagged against the
    reference window (:func:`ragassay.analysis.trend.trend`); ``?by=day|week``."""
    from ...errors import ConfigError

    entry = _entry(request)
    settings = _settings(request, entry.run())
    by = request.query_params.get("by", "day")
    if by not in ("day", "week"):
        raise ConfigError(f"by={by!r}: give day or week")
    section = page(entry, "drift", by, settings)
    if section is None:
        raise HTTPException(404, f"run {entry.run_id[:12]} has no sample from a trace: no drift to show")
    return _page(request, entry, "drift", [section])


def failures_page(request):
    """The failure browser: (system, sample) rows, filtered, worst first, one page at a time."""
    from .failures import PAGE, Filters, page_of

    entry = _entry(request)
    run = entry.run()
    filters = Filters.of(request.query_params, run)
    found = page(entry, "failures", dataclasses.replace(filters, page=1))  # every page's rows, kept once
    pages = max(1, -(-len(found) // PAGE))
    if filters.page > pages:
        raise HTTPException(404, f"page {filters.page} of {pages}: no such page")
    query = {k: v for k, v in request.query_params.multi_items() if k != "page"}
    return _page(
        request,
        entry,
        "failures",
        [],
        filters=filters,
        found=len(found),
        shown=page_of(run, found, filters),
        pages=pages,
        query=query,
        total=len(run.systems) * len(run.question_ids),
    )


def sample_page(request):
    """One sample: question, references, and per system the answer, contexts, metric values with reasons,
    judge verdicts with explanations and groundedness segments, claims where a claim metric stored them."""
    from ...models import Sample
    from ...results import read_sample
    from ..sections.browser import sample_entry

    run, payloads = read_sample(request.app.state.store, request.path_params["run"], request.path_params["question_id"])
    table = run.score_table
    scores = list(table.rows(table.repeat == 0))
    sample = Sample.model_validate_json(run.sample_json[0])
    tabs = sections_of.tabs_of(run)  # the tabs of the sample's run (robustness) and of the sample itself (drift)
    title = f"Run {run.id[:12]} ({run.info.project})"
    context = {"sample": sample_entry(run, sample, payloads, scores)}
    return render(request, "run.html", title=title, run=run, tab="failures", tabs=tabs, sections=[], **context)


ROUTES = [
    Route("/", runs_page, name="runs"),
    Route("/runs/{run}", comparison_page, name="run"),
    Route("/runs/{run}/breakdowns", breakdowns_page, name="breakdowns"),
    Route("/runs/{run}/cost", cost_page, name="cost"),
    Route("/runs/{run}/robustness", robustness_page, name="robustness"),
    Route("/runs/{run}/drift", drift_page, name="drift"),
    Route("/runs/{run}/failures", failures_page, name="failures"),
    Route("/runs/{run}/samples/{question_id:path}", sample_page, name="sample"),
]
