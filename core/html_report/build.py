"""Assemble the HTML report of stored runs: one self-contained page (see docs/results.md, "HTML report")."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from ..errors import RagassayError
from .browser import WORST_PER_SYSTEM, sample_entry, worst_samples
from .markup import esc, json_script, note, section
from .page import BROWSER, page
from .tables import breakdown_table, comparison_section, cost_section, grammar_section, pairs_section, verdict_section

if TYPE_CHECKING:  # pragma: no cover
    from ..frames import RunFrames
    from ..store.database import ResultsStore

MAX_GROUPS = 8  # a field with 2 to this many distinct values gets a breakdown
MAX_BREAKDOWNS = 4
NOT_GROUPING = {"question_id", "question", "reference_answers", "reference_contexts", "reference_context_ids"}


def build_report(
    store: ResultsStore,
    run_ids: list[str],
    *,
    baseline: str | None = None,
    alpha: float = 0.05,
    seed: int = 0,
    worst: int = WORST_PER_SYSTEM,
) -> str:
    """The HTML report of the stored runs ``run_ids`` (ids or unique prefixes), as one string.

    Per run: the verdict block, the comparison and paired verdict tables (:func:`ragassay.analysis.verdicts.decide`
    with ``baseline``, ``alpha`` and ``seed``), breakdowns and box plots by the sample fields with a few distinct
    values, the cost view, the metric correlation matrix and the GRAMMAR view; then the failure browser over the
    ``worst`` samples of each system. The same runs and arguments give the same bytes.
    """
    from ..frames import _read

    body, nav, cases = [], [], []
    runs = [store.get_run(r) for r in run_ids]
    for index, run in enumerate(runs):
        frames = _read(store, run)
        suffix = f"-{index + 1}" if len(runs) > 1 else ""
        html, directions = _run_sections(store, frames, suffix, baseline, alpha, seed)
        body.append(html)
        nav.append((f"run{suffix}", f"run {run['id'][:12]}"))
        cases += _cases(store, frames, directions, worst, prefix=f"{run['id'][:8]}/" if len(runs) > 1 else "")
    body.append(_browser_section(cases, runs, worst))
    nav.append(("browser", "failure browser"))
    title = "ragassay report: " + ", ".join(f"{r['project']} run {r['id'][:12]}" for r in runs)
    return page(title, nav, "".join(body))


def _run_sections(store, frames: RunFrames, suffix: str, baseline, alpha: float, seed: int) -> tuple[str, dict]:
    """The sections of one run, and each metric's direction."""
    from ..analysis.verdicts import verdict_sentences

    run = frames.run
    verdicts = frame_verdicts(frames, baseline=baseline, alpha=alpha, seed=seed)
    header = (
        f'<div id="run{suffix}"><h2>Run {esc(run["id"][:12])} ({esc(run["project"])})</h2>'
        f'<p class="note">{esc(run["created"].strftime("%Y-%m-%d %H:%M UTC"))}; state {esc(run["state"])}; '
        f"{run['sample_count']:,} samples; systems: {esc(', '.join(run['systems']))}</p>"
    )
    warnings = "".join(note(f"warning: {w}") for w in run["warnings"])
    parts = [
        header + warnings,
        verdict_section(verdicts, verdict_sentences(verdicts)),
        comparison_section(verdicts),
        pairs_section(verdicts),
        _breakdowns(frames, verdicts.seed),
        _cost(frames, verdicts.baseline),
        _correlation(frames),
        _grammar(store, frames),
        "</div>",
    ]
    html = re.sub(r'<section id="([\w-]+)"', lambda m: f'<section id="{m[1]}{suffix}"', "".join(parts))
    return html, {c.metric: c.direction for c in verdicts.cells}


def frame_verdicts(frames: RunFrames, *, baseline: str | None, alpha: float, seed: int):
    """:func:`ragassay.analysis.verdicts.decide` of a run from its frames (read once for the whole report):
    the same scored values (repeat 0), unscored counts and directions as ``decide`` reads from the store."""
    from ..analysis.verdicts import decide_values

    scores = frames.scores()
    columns = list(scores.columns)
    systems = frames.run["systems"]
    values = {}
    for system in systems:
        table = scores.loc[system]
        for column in columns:
            present = table[column].dropna()
            values[(system, column)] = dict(zip(present.index, present.tolist()))
    unscored = {
        **_unscored(frames.metrics, "metric", "value", ""),
        **_unscored(frames.judgements, "judge", "score", "judge:"),
    }
    specs = frames.run["spec"].get("metrics") or {}
    directions = {c: ((specs.get(c) or {}).get("traits") or {}).get("direction", "higher") for c in columns}
    return decide_values(
        values,
        systems,
        columns,
        directions,
        run_id=frames.run["id"],
        baseline=baseline,
        alpha=alpha,
        seed=seed,
        unscored=unscored,
    )


def _unscored(table, label: str, value: str, prefix: str) -> dict[tuple[str, str], int]:
    first = table.loc[(table["repeat"] == 0) & table[value].isna()]
    counts = first.groupby(["system", label], sort=False).size()
    return {(system, prefix + name): int(n) for (system, name), n in counts.items()}


def grouping_fields(frames: RunFrames) -> list[str]:
    """Sample columns with 2 to :data:`MAX_GROUPS` distinct values (at most :data:`MAX_BREAKDOWNS`), in column
    order: the fields worth a breakdown."""
    fields = []
    for column in frames.samples.reset_index().columns:
        if column in NOT_GROUPING:
            continue
        values = frames.samples.reset_index()[column]
        try:
            distinct = values.dropna().map(lambda v: v if isinstance(v, (str, int, float, bool)) else repr(v)).nunique()
        except TypeError:
            continue
        if 2 <= distinct <= MAX_GROUPS:
            fields.append(column)
    return fields[:MAX_BREAKDOWNS]


def _breakdowns(frames: RunFrames, seed: int) -> str:
    from ..analysis.breakdown import breakdown, field_values, group_labels
    from .plots import box_svg

    fields = grouping_fields(frames)
    if not fields:
        return section("breakdowns", "Breakdowns", note("No sample field has between 2 and 8 distinct values."))
    scores = frames.scores()
    parts = []
    for field in fields:
        result = breakdown(frames, field, seed=seed)
        labels, order, _ = group_labels(field_values(frames.samples, field), field)
        svg = box_svg(scores, labels, order, frames.run["systems"], field)
        parts.append(breakdown_table(result) + f'<div class="plot">{svg}</div>')
    legend = "mean [95% BCa bootstrap interval] per group; box plots: quartiles and 1.5 IQR whiskers, no outliers."
    return section("breakdowns", "Breakdowns", "".join(parts), legend)


def _cost(frames: RunFrames, baseline: str) -> str:
    from ..analysis.cost_view import cost_view

    try:
        return cost_section(cost_view(frames, baseline=baseline))
    except RagassayError as exc:
        return cost_section(None, str(exc))


def _correlation(frames: RunFrames) -> str:
    from .plots import correlation_svg

    svg = correlation_svg(frames.scores())
    body = f'<div class="plot">{svg}</div>' if svg else note("Fewer than two metrics: no correlation matrix.")
    legend = "Pearson r of each pair of metrics over every (system, sample) both scored (thesis Figure 5.1)."
    return section("correlation", "Metric correlation", body, legend)


def _grammar(store, frames: RunFrames) -> str:
    from ..analysis.report import grammar_report

    if frames.samples["group_id"].isna().all():
        return grammar_section(None, "no sample has a group_id (see docs/grammar.md)")
    try:
        return grammar_section(grammar_report(store, frames.run["id"]))
    except RagassayError as exc:
        return grammar_section(None, str(exc))


def _cases(store, frames: RunFrames, directions: dict, worst: int, prefix: str) -> list[dict[str, Any]]:
    scores = frames.scores()
    order = list(frames.samples.index)
    chosen = worst_samples(scores, directions, order, worst)
    cases = []
    for question_id in chosen:
        entry = sample_entry(store.sample_detail(frames.run["id"], question_id), frames.run["systems"])
        entry["id"] = prefix + entry["id"]
        cases.append(entry)
    return cases


def _browser_section(cases: list[dict[str, Any]], runs: list[dict], worst: int) -> str:
    systems = list(dict.fromkeys(e["system"] for case in cases for e in case["systems"]))
    metrics = list(dict.fromkeys(m["name"] for case in cases for e in case["systems"] for m in e["metrics"]))
    metrics += list(dict.fromkeys(m["name"] for case in cases for e in case["systems"] for m in e["judgements"]))
    verdicts = sorted({m["verdict"] for c in cases for e in c["systems"] for m in e["judgements"] if m["verdict"]})
    if any(e["status"] == "failed" for c in cases for e in c["systems"]):
        verdicts.append("failed")
    total = sum(r["sample_count"] for r in runs)
    data = {"systems": systems, "metrics": metrics, "verdicts": verdicts, "samples": _finite(cases)}
    legend = (
        f"The {worst} worst samples of each system (mean rank over all metrics, unscored last): {len(cases):,} of "
        f"{total:,} samples, every system's output for each. Reference contexts are marked REFERENCE."
    )
    return section("browser", "Failure browser", BROWSER + json_script("browser-data", data), legend)


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float written as a string (JSON has no NaN or infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
