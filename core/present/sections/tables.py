"""The report's statistics sections as data (:mod:`ragassay.present.blocks`): conclusion, verdicts, comparison,
paired verdicts, latency, breakdowns, cost and GRAMMAR. The templates render them; ``ragassay serve`` shows the same."""

from __future__ import annotations

from ..blocks import Cell, Items, Note, Section, Table
from ..templating import interval, num, pvalue, signed

DOCS = "docs/statistics.md"


def conclusion_section(conclusion) -> Section:
    """What the run shows, in a few plain sentences (:class:`ragassay.analysis.conclusion.Conclusion`)."""
    legend = f"What the run shows, in short; the sections below give every number. See {DOCS}."
    return Section("conclusion", "Conclusion", [Items(list(conclusion.sentences), "conclusion")], legend)


def verdict_section(verdicts, sentences: list[str]) -> Section:
    """The verdict block: one plain sentence per finding, the baseline, alpha and method named; first, for a run
    that is not complete, what the verdicts stand on (``partial: N of M samples, ...``)."""
    legend = (
        f"Baseline: {verdicts.baseline}; alpha = {verdicts.alpha}; seed = {verdicts.seed}. {verdicts.method}. "
        f"See {DOCS}."
    )
    items = Items(list(sentences), "verdicts", "Only one system: nothing to compare.")
    parts = ([Note(verdicts.partial[:1].upper() + verdicts.partial[1:] + ".")] if verdicts.partial else []) + [items]
    return Section("verdicts", "Verdicts", parts, legend)


def comparison_section(verdicts, hidden: dict[str, str] | None = None) -> Section:
    """Mean, 95% interval, n and unscored per system x metric; the best mean of each column (by the metric's
    direction) is marked; columns that carry no information are named in a note instead."""
    hidden = hidden or {}
    metrics = [m for m in dict.fromkeys(c.metric for c in verdicts.cells) if m not in hidden]
    systems = list(dict.fromkeys(c.system for c in verdicts.cells))
    cells = {(c.system, c.metric): c for c in verdicts.cells}
    best = {m: _best([cells[(s, m)] for s in systems]) for m in metrics}
    headers = ["system"] + [
        f"{m} ({'higher' if cells[(systems[0], m)].direction != 'lower' else 'lower'} is better)" for m in metrics
    ]
    rows = []
    for system in systems:
        row: list = [system]
        for metric in metrics:
            c = cells[(system, metric)]
            mark = "best" if c.mean is not None and c.mean == best[metric] else ""
            unscored = f", {c.unscored:,} unscored" if c.unscored else ""
            row.append(Cell(num(c.mean), f"{interval(c.ci_low, c.ci_high)} n={c.n:,}{unscored}", mark))
        rows.append(row)
    legend = "mean [95% BCa bootstrap interval] n = scored samples; the best mean of each column is in bold."
    notes = [Note(f"hidden: {name} ({why})") for name, why in hidden.items()]
    return Section("comparison", "Comparison", [Table(headers, rows, "comparison"), *notes], legend)


def _best(cells) -> float | None:
    means = [c.mean for c in cells if c.mean is not None]
    if not means:
        return None
    return min(means) if cells[0].direction == "lower" else max(means)


def pairs_section(verdicts) -> Section:
    """Each system against the baseline per metric: difference, interval at its level, Holm p, effect size, MDE,
    verdict."""
    from ...analysis.clustered import turns_in
    from ...analysis.sentences import confidence

    headers = ["metric", "system", "n", "differing", "difference", "interval", "p", "Holm p", "d_z", "MDE", "verdict"]
    rows = [
        [
            p.metric,
            p.system,
            num(p.n) if p.n_clusters >= p.n else turns_in(p.n, p.n_clusters),
            num(p.n_discordant),
            signed(p.mean_diff),
            num(None) if p.level is None else Cell(_bounds(p.ci_low, p.ci_high), confidence(p.level)),
            pvalue(p.p_value),
            pvalue(p.p_holm),
            num(p.effect_size, 2),
            num(p.mde),
            Cell(p.verdict, p.reason or "", "verdict v-" + p.verdict.replace(" ", "-")),
        ]
        for p in verdicts.pairs
    ]
    legend = (
        f"difference = system - baseline ({verdicts.baseline}) on the samples both scored; interval: the differences "
        "the paired sign-flip permutation test does not reject, at the comparison's Holm level (so a verdict is "
        "exactly an interval that excludes 0); Holm p adjusted over the decision family "
        f"[{', '.join(verdicts.family)}]; d_z = mean difference / sd; MDE = smallest difference detectable with "
        f"power 0.8. See {DOCS}."
    )
    body = Table(headers, rows, "pairs") if rows else Note("Only one system: no pair to test.")
    return Section("pairs", "Paired verdicts against the baseline", [body], legend)


def _bounds(low: float | None, high: float | None) -> str:
    lower = "open" if low is None else f"{low:+.3f}"
    upper = "open" if high is None else f"{high:+.3f}"
    return f"[{lower}, {upper}]"


def latency_section(part) -> Section:
    """p50/p95/p99 latency per system with intervals, and the quality-cost-latency frontier."""
    if not any(stats.n for stats in part.latency):
        return Section("latency", "Latency and frontier", [Note("No output reports a latency.")])
    points = {p.system: p for p in part.frontier.points} if part.frontier else {}
    rows = []
    for stats in part.latency:
        cells = [Cell(num(q.value, 4), interval(q.ci_low, q.ci_high, 4)) for q in stats.quantiles]
        point = points.get(stats.system)
        place = (
            num(None)
            if point is None
            else "on the frontier"
            if point.on_frontier
            else ("dominated by " + ", ".join(point.dominated_by))
        )
        rows.append([stats.system, num(stats.n), *cells, place])
    legend = "latency in seconds over ok outputs [95% percentile-bootstrap interval]."
    if part.frontier is not None:
        f = part.frontier
        legend += f" Frontier: {f.basis()}{''.join('; ' + n for n in f.notes)}."
    headers = ["system", "n", "p50 s", "p95 s", "p99 s", "frontier"]
    return Section("latency", "Latency and frontier", [Table(headers, rows, "latency")], legend)


def breakdown_table(result) -> Table:
    """One breakdown (:class:`ragassay.analysis.breakdown.Breakdown`): group x system rows, metric columns."""
    metrics = list(dict.fromkeys(r.metric for r in result.rows))
    cells = {(r.group, r.system, r.metric): r for r in result.rows}
    systems = list(dict.fromkeys(r.system for r in result.rows))
    rows = []
    for group in result.groups:
        for system in systems:
            row: list = [group, num(result.sizes[group]), system]
            for metric in metrics:
                r = cells[(group, system, metric)]
                row.append(Cell(num(r.mean), interval(r.ci_low, r.ci_high), title=r.reason or ""))
            rows.append(row)
    headers = [result.by, "samples", "system", *metrics]
    return Table(headers, rows, caption=f"by {result.by}", notes=list(result.notes))


def cost_section(view, reason: str = "") -> Section:
    """Tokens, calls, cost, latency, evaluation cost and quality per dollar per system."""
    if view is None:
        return Section("cost", "Cost", [Note(f"No cost view: {reason}")])
    headers = [
        "system",
        f"quality ({view.metric})",
        "input tokens",
        "output tokens",
        "calls",
        "cost $",
        "mean latency s",
        "evaluation cost $",
        "quality per $",
        f"tokens saved vs {view.baseline}",
        "notes",
    ]
    rows = [
        [
            r.system,
            Cell(num(r.quality), interval(r.quality_ci_low, r.quality_ci_high)),
            num(r.input_tokens),
            num(r.output_tokens),
            num(r.calls),
            num(r.cost_usd, 4),
            num(r.mean_latency_s),
            num(r.eval_cost_usd, 4),
            num(r.quality_per_dollar, 1),
            _saved(r),
            "; ".join(r.notes),
        ]
        for r in view.rows
    ]
    legend = "A dash is an unknown value (an unpriced model: see notes), never a zero. See docs/results.md."
    return Section("cost", "Cost", [Table(headers, rows, "cost")], legend)


def _saved(r) -> str:
    if r.tokens_saved is None:
        return num(None)
    share = "" if r.tokens_saved_share is None else f" ({r.tokens_saved_share:+.1%})"
    return f"{r.tokens_saved:+,}{share}"


def grammar_section(report, reason: str = "") -> Section:
    """The GRAMMAR view: gap / robust / non-robust groups, knowledge accuracy, Acc, R and modular blame."""
    if report is None:
        return Section("grammar", "GRAMMAR view", [Note(f"No GRAMMAR view: {reason}")])
    headers = ["system", "samples", "gap", "robust", "non-robust", "knowledge acc", "Acc", "R"]
    headers += ["wrong: LM", "wrong: retrieval", "wrong: undetermined"]
    rows = []
    for system in report.systems:
        o, blame = system.overall, system.blame
        counts = [o.groups.get(k, 0) for k in ("gap", "robust", "non-robust")]
        rows.append(
            [system.system, num(o.total), *map(num, counts), num(o.knowledge_accuracy), num(o.accuracy)]
            + [num(o.robustness), num(blame.lm), num(blame.retrieval), num(blame.undetermined)]
        )
    legend = "Acc = Eq. 2, R = Eq. 1 of the GRAMMAR paper; blame by context comparison. See docs/grammar.md."
    return Section("grammar", "GRAMMAR view", [Table(headers, rows, "grammar")], legend)
