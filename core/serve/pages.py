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

from .templating import render

TABS = [("", "comparison"), ("breakdowns", "breakdowns"), ("cost", "cost and latency"), ("failures", "failures")]


def runs_page(request):
    """Every stored run, newest first: state, systems, samples, outputs, failures."""
    runs = request.app.state.store.list_runs()
    for run in runs:
        run["expected"] = run["systems"] * run["sample_count"]
    return render(request, "runs.html", title="ragassay runs", runs=runs)


def _entry(request):
    """The run of the request's path at its current version (:class:`ragassay.serve.cache.RunEntry`)."""
    return request.app.state.runs.entry(request.path_params["run"])


def _settings(request, run) -> dict:
    """baseline, alpha and seed from the query; a baseline that is not a system is a ConfigError (a 400)."""
    from ..errors import ConfigError

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
    return {"baseline": baseline, "alpha": alpha, "seed": seed}


def _page(request, run, tab: str, sections: list, **context):
    from ..analysis.robustness import perturbations
    from ..analysis.trend import trace_starts

    tabs = TABS + ([("robustness", "robustness")] if perturbations(run) else [])
    tabs += [("drift", "drift")] if any(start is not None for start in trace_starts(run)) else []
    title = f"Run {run.id[:12]} ({run.info.project})"
    return render(request, "run.html", title=title, run=run, tab=tab, tabs=tabs, sections=sections, **context)


def comparison_page(request):
    """Verdicts, the comparison with intervals, and the paired verdicts against the baseline."""
    entry = _entry(request)
    run = entry.run()
    settings = _settings(request, run)
    sections = entry.get(("comparison", _key(settings)), lambda: _comparison_sections(entry, settings))
    return _page(request, run, "", sections)


def _key(settings: dict) -> tuple:
    return tuple(sorted(settings.items()))


def _compared(entry, settings: dict):
    """``compare`` of the run with ``settings``, computed once per run version."""
    from ..analysis.comparison import compare

    return entry.get(("compare", _key(settings)), lambda: compare([entry.run()], **settings))


def _comparison_sections(entry, settings: dict) -> list:
    from ..analysis.sentences import verdict_sentences
    from ..html_report.tables import comparison_section, pairs_section, verdict_section

    comparison = _compared(entry, settings)
    verdicts = comparison.runs[0].verdicts
    return [
        verdict_section(verdicts, verdict_sentences(verdicts)),
        comparison_section(verdicts, comparison.hidden),
        pairs_section(verdicts),
    ]


def breakdowns_page(request):
    """Breakdowns by the declared sample fields with box plots, the metric correlation, the GRAMMAR view."""
    entry = _entry(request)
    run = entry.run()
    seed = _settings(request, run)["seed"]
    sections = entry.get(("breakdowns", seed), lambda: _breakdown_sections(entry.run(payloads=True), seed))
    return _page(request, run, "breakdowns", sections)


def _breakdown_sections(run, seed: int) -> list:
    from ..analysis.breakdown import breakdown
    from ..analysis.report import breakdown_fields, grammar_or_reason
    from ..html_report.build import breakdowns_section, correlation_section
    from ..html_report.tables import grammar_section

    results = [breakdown(run, field, seed=seed) for field in breakdown_fields(run)]
    grammar, reason = grammar_or_reason(run)
    return [breakdowns_section(run, results), correlation_section(run), grammar_section(grammar, reason)]


def cost_page(request):
    """The cost view and latency quantiles with the quality-cost-latency frontier."""
    entry = _entry(request)
    run = entry.run()
    settings = _settings(request, run)
    return _page(request, run, "cost", entry.get(("cost", _key(settings)), lambda: _cost_sections(entry, settings)))


def _cost_sections(entry, settings: dict) -> list:
    from ..analysis.cost_view import cost_view
    from ..errors import RagassayError
    from ..html_report.tables import cost_section, latency_section

    part = _compared(entry, settings).runs[0]
    try:
        view = cost_view(entry.run(), baseline=part.verdicts.baseline, seed=settings["seed"], latency=part.latency)
        reason = ""
    except RagassayError as exc:
        view, reason = None, str(exc)
    return [cost_section(view, reason), latency_section(part)]


def robustness_page(request):
    """The robustness profile of a run with perturbed systems."""
    from ..html_report.robustness import robustness_section

    entry = _entry(request)
    run = entry.run()
    settings = _settings(request, run)
    key = ("robustness", _key(settings))
    section = entry.get(key, lambda: robustness_section(run, settings["alpha"], settings["seed"]))
    if section is None:
        raise HTTPException(404, f"run {run.id[:12]} has no perturbed system: no robustness profile")
    return _page(request, run, "robustness", [section])


def drift_page(request):
    """Drift over time of a run scored from traces: per-window means with intervals, windows flagged against the
    reference window (:func:`ragassay.analysis.trend.trend`); ``?by=day|week``."""
    from ..errors import ConfigError
    from ..html_report.trend import trend_section

    entry = _entry(request)
    run = entry.run()
    settings = _settings(request, run)
    by = request.query_params.get("by", "day")
    if by not in ("day", "week"):
        raise ConfigError(f"by={by!r}: give day or week")
    section = entry.get(
        ("drift", by, _key(settings)), lambda: trend_section(run, settings["alpha"], settings["seed"], by)
    )
    if section is None:
        raise HTTPException(404, f"run {run.id[:12]} has no sample from a trace: no drift to show")
    return _page(request, run, "drift", [section])


def failures_page(request):
    """The failure browser: (system, sample) rows, filtered, worst first, one page at a time."""
    from .failures import PAGE, Filters, page_of, rows

    entry = _entry(request)
    run = entry.run()
    filters = Filters.of(request.query_params, run)
    every = dataclasses.replace(filters, page=1)  # the rows of every page, computed once per run version

    def found_rows():
        searched = entry.get(("search", filters.q), lambda: _searched(request, run, filters.q)) if filters.q else None
        return rows(run, every, searched)

    found = entry.get(("failures", every), found_rows)
    pages = max(1, -(-len(found) // PAGE))
    if filters.page > pages:
        raise HTTPException(404, f"page {filters.page} of {pages}: no such page")
    query = {k: v for k, v in request.query_params.multi_items() if k != "page"}
    return _page(
        request,
        run,
        "failures",
        [],
        filters=filters,
        found=len(found),
        shown=page_of(run, found, filters),
        pages=pages,
        query=query,
        total=len(run.systems) * len(run.question_ids),
    )


def _searched(request, run, text: str) -> set[tuple[str, str]]:
    """(system, question_id) of the stored outputs whose JSON contains ``text`` (case insensitive)."""
    import json

    needles = {text.casefold(), json.dumps(text, ensure_ascii=False)[1:-1].casefold()}
    found = set()
    for record in request.app.state.store.output_records(run.id, payloads=True):
        raw = (record[15] or "").casefold()
        if any(n in raw for n in needles):
            found.add((record[0], record[1]))
    return found


def sample_page(request):
    """One sample: question, references, and per system the answer, contexts, metric values with reasons,
    judge verdicts with explanations and groundedness segments, claims where a claim metric stored them."""
    from ..html_report.browser import sample_entry
    from ..models import Sample
    from ..results import read_sample

    run, payloads = read_sample(request.app.state.store, request.path_params["run"], request.path_params["question_id"])
    table = run.score_table
    scores = list(table.rows(table.repeat == 0))
    sample = Sample.model_validate_json(run.sample_json[0])
    return _page(request, run, "failures", [], sample=sample_entry(run, sample, payloads, scores))


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
