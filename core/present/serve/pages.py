"""The pages of ``ragassay serve``: the same analyses and section data as the HTML report (nothing here
computes a statistic), on the run as stored now. Each request asks the run's version first and reuses the run
and the sections computed for that version (:mod:`.cache`), or reads and computes them again; the sample page
reads only its sample (:func:`ragassay.results.read_sample`).

- ``/``: the runs (and a line linking the watches);
- ``/watch`` and ``/watch/{name}``: the live pages of ``ragassay watch`` (:mod:`.watch_page`);
- ``/runs/{run}`` and ``/runs/{run}/{page}``: the sections registered through ``register_sections`` for that
  page (:class:`ragassay.present.sections.registered.Sections`). ragassay's own: verdicts, comparison, paired
  verdicts on the first page; ``breakdowns``: breakdowns with box plots, metric correlation, GRAMMAR; ``cost``:
  cost and latency with the frontier; ``robustness``: the robustness profile; ``drift``: drift over time. A
  plugin's section naming another page makes that page, with its tab;
- ``/runs/{run}/failures``: the failure browser (:mod:`.failures`), below the sections of page ``failures``;
  ``/runs/{run}/samples/{question_id}``: one sample with every system's output (a turn links to its
  conversation);
- ``/runs/{run}/conversations``: the conversations section and every conversation of the run;
  ``/runs/{run}/conversations/{conversation_id}``: one conversation turn by turn (:mod:`.conversations`).

The section pages take ``baseline``, ``alpha`` and ``seed`` as query parameters (as ``compare`` takes them); their
other query parameters are the sections' ``view.params`` (``by`` of the drift page).
"""

from __future__ import annotations

import dataclasses

from starlette.exceptions import HTTPException
from starlette.routing import Route

from ..templating import render
from . import sections as sections_of
from .sections import page, settings_key
from .watch_page import ROUTES as WATCH_ROUTES

SETTINGS = ("baseline", "alpha", "seed")  # query parameters of every section page (as compare takes them)


def runs_page(request):
    """Every stored run, newest first: state, systems, samples, outputs, failures (their headers only)."""
    from ...results import read_run_headers
    from ...results.watches import read_watches

    store = request.app.state.store
    return render(
        request, "runs.html", title="ragassay runs", runs=read_run_headers(store), watches=read_watches(store)
    )


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
    tabs = sections_of.tabs(entry, request.app.state.sections)
    return render(request, "run.html", title=title, run=run, tab=tab, tabs=tabs, sections=sections, **context)


def _params(request) -> tuple:
    """The page's query parameters other than its settings, as a key (the sections' ``view.params``)."""
    return tuple(sorted((k, v) for k, v in request.query_params.items() if k not in SETTINGS))


def sections_page(request):
    """A page of registered sections (``/runs/{run}``: the comparison; ``/runs/{run}/{page}``); 404 for a page no
    section names, and for a page whose sections have nothing to show for the run (with their reason)."""
    sections = request.app.state.sections
    name = request.path_params.get("page", "")
    if name not in dict(sections.pages()):
        raise HTTPException(404)
    entry = _entry(request)
    settings = _settings(request, entry.run())
    found = page(entry, "sections", sections, name, settings, _params(request))
    if found is None:
        raise HTTPException(404, f"run {entry.run_id[:12]} {sections.absence(name, entry.run())}")
    return _page(request, entry, name, found)


def failures_page(request):
    """The failure browser: (system, sample) rows, filtered, worst first, one page at a time."""
    from .failures import PAGE, Filters, page_of

    entry = _entry(request)
    run = entry.run()
    filters = Filters.of(request.query_params, run)
    shown_above = _failures_sections(request, entry)
    found = page(entry, "failures", dataclasses.replace(filters, page=1))  # every page's rows, kept once
    pages = max(1, -(-len(found) // PAGE))
    if filters.page > pages:
        raise HTTPException(404, f"page {filters.page} of {pages}: no such page")
    query = {k: v for k, v in request.query_params.multi_items() if k != "page"}
    return _page(
        request,
        entry,
        "failures",
        shown_above,
        filters=filters,
        found=len(found),
        shown=page_of(run, found, filters),
        pages=pages,
        query=query,
        total=len(run.systems) * len(run.question_ids),
    )


def _failures_sections(request, entry) -> list:
    """The sections of page ``failures`` above the browser: none but a plugin's (ragassay's own browser is the
    page), computed with the page's settings (checked only then, as the browser alone takes none)."""
    sections = request.app.state.sections
    if all(p.builtin for p in sections.on("failures")):
        return []
    settings = _settings(request, entry.run())
    return page(entry, "sections", sections, "failures", settings, _params(request)) or []


def sample_page(request):
    """One sample: question, references (the gold per hop of a multi-hop question), and per system the answer,
    contexts, the trajectory as a timeline, metric values with reasons, judge verdicts with explanations and
    groundedness segments, claims where a claim metric stored them."""
    from ...models import Sample
    from ...results import read_sample
    from ..sections.browser import sample_entry
    from ..trajectory_view import add_timelines

    run, payloads = read_sample(request.app.state.store, request.path_params["run"], request.path_params["question_id"])
    table = run.score_table
    scores = list(table.rows(table.repeat == 0))
    sample = Sample.model_validate_json(run.sample_json[0])
    tabs = request.app.state.sections.tabs(run)  # the tabs of the sample's run (robustness), of the sample (drift)
    title = f"Run {run.id[:12]} ({run.info.project})"
    context = {"sample": add_timelines(run, sample, sample_entry(run, sample, payloads, scores), payloads, scores)}
    return render(request, "run.html", title=title, run=run, tab="failures", tabs=tabs, sections=[], **context)


def conversations_page(request):
    """The conversations of a run: the sections of page ``conversations``, then every conversation with each
    system's first failing turn, linked to its page (:mod:`.conversations`); 404 for a run without turns."""
    from .conversations import listing

    sections = request.app.state.sections
    entry = _entry(request)
    settings = _settings(request, entry.run())
    found = page(entry, "sections", sections, "conversations", settings, _params(request))
    if found is None:
        raise HTTPException(404, f"run {entry.run_id[:12]} {sections.absence('conversations', entry.run())}")
    rows, rule = listing(entry)
    return _page(request, entry, "conversations", found, conversations=rows, rule=rule)


def conversation_page(request):
    """One conversation, turn by turn: each system's query, contexts (references marked), answer, claims with
    their support, blame, and where it first failed; ``?system=S`` (repeatable) shows only those systems."""
    from ...errors import ConfigError
    from ..conversation_view import conversation_positions
    from .conversations import detail

    entry = _entry(request)
    conversation = request.path_params["conversation_id"]
    try:
        conversation_positions(entry.run(), conversation)
    except ConfigError as exc:
        raise HTTPException(404, str(exc)) from None
    found = detail(entry, conversation, tuple(request.query_params.getlist("system")))
    return _page(request, entry, "conversations", [], conversation=found)


ROUTES = [
    Route("/", runs_page, name="runs"),
    *WATCH_ROUTES,
    Route("/runs/{run}", sections_page, name="run"),
    Route("/runs/{run}/failures", failures_page, name="failures"),
    Route("/runs/{run}/samples/{question_id:path}", sample_page, name="sample"),
    Route("/runs/{run}/conversations", conversations_page, name="conversations"),
    Route("/runs/{run}/conversations/{conversation_id:path}", conversation_page, name="conversation"),
    Route("/runs/{run}/{page}", sections_page, name="page"),
]
