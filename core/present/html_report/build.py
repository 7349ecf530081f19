"""Assemble the HTML report of stored runs: one self-contained page (see docs/results.md, "HTML report").

Each run is read once (:func:`ragassay.results.read_run`) and every section registered through
``register_sections`` (ragassay's own: :mod:`ragassay.present.sections.shipped`; then each plugin's) renders an
analysis of that one object; the failure browser adds one read of the chosen samples' outputs. Nothing here
computes a statistic, and nothing builds markup: the sections are data (:mod:`ragassay.present.blocks`) rendered by
the templates ``ragassay serve`` uses (``report.html``).
"""

from __future__ import annotations

import math
from typing import Any

from ..blocks import Section
from ..sections.browser import WORST_PER_SYSTEM, sample_entry


def build_report(
    store,
    run_ids: list[str],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    worst: int = WORST_PER_SYSTEM,
    host=None,
) -> str:
    """The HTML report of the stored runs ``run_ids`` (ids or unique prefixes), as one string.

    Per run: the verdicts, the comparison and paired verdict tables (with ``baseline``, ``alpha`` and ``seed``),
    latency and the frontier, breakdowns and box plots by the declared sample fields, the cost view, the metric
    correlation matrix and, for grouped samples, the GRAMMAR view; then the failure browser over the ``worst``
    samples of each system. The same runs and arguments give the same bytes.

    The sections are those registered through ``register_sections`` on ``host`` (a
    :class:`ragassay.plugin_manager.PluginHost`; default: the process-wide one): ragassay's own, then each
    plugin's, by ``report_order`` (:mod:`ragassay.present.sections.registered`).
    """
    from ...analysis.worst import worst_samples
    from ...results import read_payloads, read_run
    from ..sections.registered import Sections
    from ..templating import render_text

    sections = Sections.of(host)
    runs = [read_run(store, ref, payloads="grouped") for ref in run_ids]
    shown, nav, cases = [], [], []
    for index, run in enumerate(runs):
        suffix = f"-{index + 1}" if len(runs) > 1 else ""
        shown.append(
            {
                "suffix": suffix,
                "info": run.info,
                "systems": run.systems,
                "sections": run_sections(run, baseline, alpha, seed, sections, _payload_reader(store, run)),
            }
        )
        nav.append((f"run{suffix}", f"run {run.id[:12]}"))
        chosen = worst_samples(run, worst)
        payloads = _payloads(run, chosen) if run.has_payloads else read_payloads(store, run.id, chosen)
        prefix = f"{run.id[:8]}/" if len(runs) > 1 else ""
        cases += _cases(run, chosen, payloads, prefix)
    nav.append(("browser", "failure browser"))
    title = "ragassay report: " + ", ".join(f"{r.info.project} run {r.id[:12]}" for r in runs)
    data, legend = _browser(cases, runs, worst)
    page = render_text(
        "report.html", standalone=True, title=title, nav=nav, runs=shown, browser=data, browser_legend=legend
    )
    return page + "\n"


def run_sections(run, baseline, alpha: float, seed: int, sections=None, payloads=None) -> list[Section]:
    """The sections of one run, in report order (:class:`ragassay.present.sections.registered.Sections`; default:
    the process-wide plugin host's); a section with nothing to show for the run (robustness for a run without
    perturbed systems) is left out. ``payloads`` reads the run with every output's JSON when a section asks for
    it (the trajectories section)."""
    from ..sections.registered import RunView, Sections

    view = RunView.of_run(run, payloads=payloads, baseline=baseline, alpha=alpha, seed=seed)
    return (sections or Sections.of()).report(view)


def _payload_reader(store, run):
    """How to read ``run`` again with every output's JSON, when a section asks for it."""

    def read():
        from ...results.read import with_payloads

        return with_payloads(store, run)

    return read


def _payloads(run, question_ids: list[str]) -> dict:
    return {(s, q): run.payload(s, q) for s in run.systems for q in question_ids}


def _cases(run, chosen: list[str], payloads: dict, prefix: str) -> list[dict[str, Any]]:
    """The browser's entry of each chosen sample, each system's with its ``badness`` (its mean rank share)."""
    from ...analysis.worst import badness

    wanted = set(chosen)
    scores: dict[str, list] = {q: [] for q in chosen}
    for s in run.ordered_scores():
        if s.repeat == 0 and s.question_id in wanted:
            scores[s.question_id].append(s)
    ranks = badness(run)
    cases = []
    for q in chosen:
        entry = sample_entry(run, run.samples[run.position[q]], payloads, scores[q])
        entry["id"] = prefix + entry["id"]
        for system in entry["systems"]:
            system["badness"] = round(float(ranks[system["system"]][run.position[q]]), 6)
        cases.append(entry)
    return cases


def _browser(cases: list[dict[str, Any]], runs: list, worst: int) -> tuple[dict[str, Any], str]:
    systems = list(dict.fromkeys(e["system"] for case in cases for e in case["systems"]))
    metrics = list(dict.fromkeys(m["name"] for case in cases for e in case["systems"] for m in e["metrics"]))
    metrics += list(dict.fromkeys(m["name"] for case in cases for e in case["systems"] for m in e["judgements"]))
    verdicts = sorted({m["verdict"] for c in cases for e in c["systems"] for m in e["judgements"] if m["verdict"]})
    if any(e["status"] == "failed" for c in cases for e in c["systems"]):
        verdicts.append("failed")
    total = sum(r.info.sample_count for r in runs)
    order = sorted(
        ((c, e) for c, case in enumerate(cases) for e in range(len(case["systems"]))),
        key=lambda pair: (-cases[pair[0]]["systems"][pair[1]]["badness"], pair),
    )
    directions = {column: run.direction(column) for run in runs for column in run.columns}
    data = {
        "systems": systems,
        "metrics": metrics,
        "directions": directions,
        "verdicts": verdicts,
        "samples": _finite(cases),
        "order": [list(pair) for pair in order],
    }
    legend = (
        f"The {worst} worst samples of each system (mean rank over all metrics and judges, unscored last): "
        f"{len(cases):,} of {total:,} samples, every system's output for each, worst first (by that rank; with a "
        "metric chosen, by its value), each row with its scores. Reference contexts are marked REFERENCE."
    )
    return data, legend


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float written as a string (JSON has no NaN or infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
