"""Rendering a :class:`ragassay.analysis.comparison.Comparison`: the tables of ``compare`` and ``run`` (comparison,
paired differences, verdicts, latency and frontier, run-to-run spread) and the verdicts in words. Rendering only:
every number comes from the analysis."""

from __future__ import annotations

from ..text import counted
from .render import Column, Table, esc, number_text
from .sequential_view import NOT_VALID, replace_verdict, sequential_lines, sequential_table

DOCS = "docs/statistics.md"
MAX_LINES = 12  # findings printed per run; the strongest come first
TABLES = ("comparison", "pairs", "verdicts", "sequential", "latency", "variance")
_LEGEND = (
    "cells: mean over scored outputs ({n}) and its 95% {interval} [low, high]{unit}; +Nu: N outputs unscored; bold "
    "green: best in its column (by the metric's direction); failed: failed outputs (+N missing: not run yet); "
    "retrieved: outputs with a non-empty retrieved context / outputs; eval: model calls and cost of the metrics and "
    "judges"
)
LEGEND = _LEGEND.format(n="n scored", interval="bootstrap interval", unit="")
LEGEND_CLUSTERED = _LEGEND.format(
    n="n scored turns", interval="cluster-bootstrap interval", unit=" (whole conversations resampled)"
)
EXPLAIN = (
    f"95% CI (cells): the range that holds the true mean in 95 of 100 repetitions; a BCa bootstrap interval, "
    f"resampling the samples ({DOCS}#confidence-intervals).",
    f"CI of a difference: the differences a paired sign-flip permutation test does not reject, at the comparison's "
    f"Holm level (98.33% CI = level 0.0167), so 'beats' is exactly 'the interval excludes 0' ({DOCS}#one-procedure).",
    f"Holm p: the test's p-value adjusted (Holm 1979) for testing the declared family at once, so the chance of any "
    f"false 'beats' stays below alpha ({DOCS}#the-decision-family).",
    f"too few differing samples: the two systems differ on so few samples that no result could reach the level "
    f"(Tarone's reduction); score more samples ({DOCS}#tarones-reduction).",
    f"MDE: the smallest difference these samples detect 80% of the time at the comparison's level; a smaller true "
    f"difference usually shows as 'no detectable difference' ({DOCS}#the-formulas).",
)


def comparison_tables(comparison, against: str | None = None) -> dict[str, Table]:
    """Every table of a comparison by name (:data:`TABLES`); ``pairs`` only with ``against`` (its baseline)."""
    tables = {"comparison": comparison_table(comparison)}
    if against is not None:
        tables["pairs"] = pairs_table(comparison, against)
    tables["verdicts"] = verdicts_table(comparison)
    if any(part.sequential is not None for part in comparison.runs):
        tables["sequential"] = sequential_table(comparison)
    if any(stats.n for part in comparison.runs for stats in part.latency):
        tables["latency"] = latency_table(comparison)
    if any(part.spreads for part in comparison.runs):
        tables["variance"] = variance_table(comparison)
    return tables


def data_of(comparison, tables: dict[str, Table]) -> dict:
    """The json document: every table's records, the frontier, what was hidden and, for runs that are not
    complete, their partial notes (run id -> ``partial: N of M samples, ...``)."""
    data = {name: table.records() for name, table in tables.items()}
    data["frontier"] = [
        {
            "run": part.run_id,
            "metric": part.frontier.metric,
            "dimensions": part.frontier.dimensions,
            "latency": part.frontier.latency,
            "cost": part.frontier.cost,
            "systems": part.frontier.systems,
            "notes": part.frontier.notes,
        }
        for part in comparison.runs
        if part.frontier is not None
    ]
    data["hidden"] = comparison.hidden
    partial = {part.run_id: part.verdicts.partial for part in comparison.runs if part.verdicts.partial}
    if partial:  # runs that are not complete: what their verdicts stand on
        data["partial"] = partial
    return data


def print_comparison(
    out,
    comparison,
    *,
    against: str | None = None,
    explain: bool = False,
    compact: bool = False,
    conclude=True,
    verdicts=True,
):
    """The tables, then per run its conclusion (unless ``conclude`` is False: the report printed it first; and not
    for a run of one system, which compares nothing) and the verdicts in words (unless ``verdicts`` is False:
    people's labels decide, ``compare --labelled``), to the rich console ``out``."""
    from ..analysis.conclusion import run_conclusion
    from .render import emit

    tables = comparison_tables(comparison, against)
    emit(out, [t for name, t in tables.items() if name not in ("verdicts", "sequential")], "rich", compact=compact)
    if comparison.hidden:
        hidden = "; ".join(f"{name} ({why})" for name, why in comparison.hidden.items())
        out.print(esc(f"hidden: {hidden}. --all-columns shows them."), highlight=False)
    for part in comparison.runs:
        for line in conclusion_lines(run_conclusion(part), part.run_id) if conclude and part.verdicts.pairs else []:
            out.print(esc(line), highlight=False)
        for line in sequential_lines(part.sequential) if part.sequential is not None else []:
            out.print(esc(line), highlight=False)
        if part.sequential is not None and part.sequential.stopped:
            out.print(esc(NOT_VALID), highlight=False)
        elif verdicts:
            print_verdicts(out, part.verdicts)
    if explain:
        out.print("legend:", highlight=False)
        for line in EXPLAIN:
            out.print(esc(f"  {line}"), highlight=False)


def conclusion_lines(conclusion, run_id: str) -> list[str]:
    """A run's conclusion (:mod:`ragassay.analysis.conclusion`) as plain lines: a head, then one line per
    sentence."""
    return [f"conclusion, run {run_id[:8]}:", *(f"  {sentence}" for sentence in conclusion.sentences)]


def verdict_lines(verdicts) -> list[str]:
    """The verdict block of one run as plain lines (what ``compare`` prints; the pytest assertions quote it)."""
    from ..analysis.sentences import verdict_sentences

    declared = sum(1 for p in verdicts.pairs if p.metric in verdicts.family)
    left = f" ({declared - verdicts.compared} with too few differing samples)" if declared > verdicts.compared else ""
    head = (
        f"verdicts, run {verdicts.run_id[:8]}: against {verdicts.baseline} (baseline), alpha {verdicts.alpha:g}, "
        f"Holm over {verdicts.compared} of {counted(declared, 'comparison')}{left} on "
        f"{', '.join(verdicts.family) or '-'}, seed {verdicts.seed}"
    )
    sentences = verdict_sentences(verdicts) or ["only one system: nothing to compare"]
    partial = [f"  {verdicts.partial}"] if verdicts.partial else []  # a run that is not complete
    lines = [head, *partial] + [f"  {s}" for s in sentences[:MAX_LINES]]
    if len(sentences) > MAX_LINES:
        lines.append(f"  ... and {len(sentences) - MAX_LINES} more (--format json lists every pair)")
    return lines


def print_verdicts(out, verdicts) -> None:
    for line in verdict_lines(verdicts):
        out.print(esc(line), highlight=False)


def comparison_table(comparison) -> Table:
    several = comparison.several
    columns = [
        Column("system", show=lambda r: f"{r['run'][:8]}/{r['system']}" if several else r["system"]),
        Column("run", in_text=False),
    ]
    for name in comparison.columns:
        columns += [
            Column(name, numeric=True, show=lambda r, name=name: _cell(r, name)),
            Column(f"{name} ci_low", numeric=True, in_text=False),
            Column(f"{name} ci_high", numeric=True, in_text=False),
            Column(f"{name} n", numeric=True, in_text=False),
            Column(f"{name} unscored", numeric=True, in_text=False),
        ]
    columns += _usage_columns(comparison)
    rows = [_row(row, comparison.columns) for row in comparison.rows]
    emphasis = set()
    for name in comparison.columns:
        best = comparison.best(name)
        emphasis |= {
            (i, name)
            for i, r in enumerate(rows)
            if best is not None and r[name] is not None and abs(r[name] - best) < 1e-12
        }
    clustered = any(run.verdicts.conversations for run in comparison.runs)
    notes = [LEGEND_CLUSTERED if clustered else LEGEND, *_footnotes(comparison)]
    return Table("comparison: mean (n scored) [95% CI]", columns, rows, notes, emphasis)


def _usage_columns(comparison) -> list[Column]:
    stopped = stopped_runs(comparison)
    columns = [
        Column("failed", numeric=True, show=lambda r: _failed_cell(r, r["run"] in stopped)),
        Column("missing", numeric=True, in_text=False),
        Column("retrieved", numeric=True, show=lambda r: f"{r['retrieved']}/{r['answered']}"),
        Column("answered", numeric=True, in_text=False),
        Column("latency s", numeric=True, digits=4),
    ]
    if comparison.show_tokens:
        columns += [
            Column("tokens in/out/cached", numeric=True, show=_tokens, in_data=False),
            Column("input tokens", numeric=True, in_text=False),
            Column("output tokens", numeric=True, in_text=False),
            Column("cached tokens", numeric=True, in_text=False),
            Column("cost $", numeric=True, digits=4, show=lambda r: _money(r["cost $"])),
        ]
    if comparison.show_evaluation:
        columns += [
            Column("eval calls", numeric=True),
            Column("eval tokens in", numeric=True, in_text=False),
            Column("eval tokens out", numeric=True, in_text=False),
            Column("eval cost $", numeric=True, digits=4, show=lambda r: _money(r["eval cost $"])),
        ]
    return columns


def stopped_runs(comparison) -> set[str]:
    """The runs of ``comparison`` that stopped sequentially: their outputs not run are not a fault."""
    return {part.run_id for part in comparison.runs if part.sequential is not None and part.sequential.stopped}


def _failed_cell(r: dict, stopped: bool) -> str:
    """``0``, ``0 +20 missing`` (not run yet), or ``0 (20 not run: stopped early)`` for a sequential run."""
    if not r["missing"]:
        return f"{r['failed']}"
    if stopped:
        return f"{r['failed']} ({r['missing']} not run: stopped early)"
    return f"{r['failed']} +{r['missing']} missing"


def _tokens(r: dict) -> str:
    return "/".join(number_text(r[k], 0) for k in ("input tokens", "output tokens", "cached tokens"))


def _money(value) -> str:
    return "?" if value is None else f"{value:.4f}"


def _row(row, columns: list[str]) -> dict:
    values = {"system": row.system, "run": row.run_id}
    for name in columns:
        cell = row.cells.get(name)
        values.update(
            {
                name: None if cell is None else cell.mean,
                f"{name} ci_low": None if cell is None else cell.ci_low,
                f"{name} ci_high": None if cell is None else cell.ci_high,
                f"{name} n": 0 if cell is None else cell.n,
                f"{name} unscored": 0 if cell is None else cell.unscored,
            }
        )
    u = row.usage
    return values | {
        "failed": u.failed,
        "missing": u.missing,
        "retrieved": u.retrievals,
        "answered": u.answered,
        "latency s": u.mean_latency_s,
        "input tokens": u.mean_input_tokens,
        "output tokens": u.mean_output_tokens,
        "cached tokens": u.mean_cached_tokens,
        "cost $": u.cost_usd,
        "eval calls": u.evaluation.calls,
        "eval tokens in": u.evaluation.input_tokens,
        "eval tokens out": u.evaluation.output_tokens,
        "eval cost $": u.evaluation.cost_usd,
    }


def _cell(row: dict, name: str) -> str:
    mean, n, unscored = row[name], row[f"{name} n"], row[f"{name} unscored"]
    if mean is None:
        return f"- ({unscored} unscored)" if unscored else "-"
    low, high = row[f"{name} ci_low"], row[f"{name} ci_high"]
    interval = "\n[no CI]" if low is None else f"\n[{low:.3f}, {high:.3f}]"
    return f"{mean:.3f} ({n})" + (f" +{unscored}u" if unscored else "") + interval


def _footnotes(comparison) -> list[str]:
    """Where tokens and cost come from; why a cost is '?'."""
    from ..llm.pricing import PRICES_AS_OF

    notes = []
    rows = comparison.rows
    if any(r.run_id in stopped_runs(comparison) and r.usage.missing for r in rows):
        notes.append(
            "not run: stopped early: a sequential run stopped processing a system once its comparisons were decided "
            "(or at the maximum sample count); those outputs were never meant to run, nothing failed"
        )
    if comparison.show_evaluation and any(r.usage.evaluation.calls or r.usage.evaluation.cache_hits for r in rows):
        for part in comparison.runs:
            e = part.totals.evaluation
            notes.append(
                f"evaluation cost, run {part.run_id[:8]} (metrics and judges, not the systems): {e.input_tokens} input "
                f"and {e.output_tokens} output tokens"
                + (f" ({e.reasoning_tokens} of them reasoning)" if e.reasoning_tokens else "")
                + f", {e.calls} model calls, {e.cache_hits} cached replies, cost $ "
                f"{_money(e.cost_usd)}" + (f" (no price for {', '.join(e.unpriced)})" if e.unpriced else "")
            )
    if comparison.show_tokens and any(r.usage.mean_input_tokens or r.usage.mean_output_tokens for r in rows):
        hits = sum(r.usage.cache_hits for r in rows)
        cached = f"; {hits} responses came from the response cache (no call made, cost counted as if made)"
        notes.append(
            f"tokens: mean per sample (input/output/provider-cached input); cost $: total per system at list prices "
            f"as of {PRICES_AS_OF} plus [llm.prices]" + (cached if hits else "")
        )
        for part in comparison.runs:
            t = part.totals
            notes.append(
                f"run {t.run_id[:8]}: {t.input_tokens} input and {t.output_tokens} output tokens, {t.calls} model "
                f"calls, {t.cache_hits} cached replies, cost $ {_money(t.cost_usd)}"
            )
    for row in rows:
        if row.usage.cost_usd is None:
            label = f"{row.run_id[:8]}/{row.system}" if comparison.several else row.system
            models = row.usage.unpriced_models
            example = models[0].rpartition("/")[2] if models else "MODEL"
            notes.append(
                f"? {label}: no price for {', '.join(models)}; add one to the config, e.g. "
                f'[llm.prices."{example}"] input_per_million = ..., output_per_million = ... (USD)'
            )
    return notes


PAIR_PARTS = ("mean_diff", "ci_low", "ci_high", "level", "verdict", "wins", "ties", "losses", "n", "n_clusters")


def pairs_table(comparison, against: str) -> Table:
    """``--against``: every system's paired difference to ``against`` per metric, from the same pair results as
    the verdicts (one procedure, one baseline)."""
    metrics = [m for m in comparison.columns]
    columns = [Column("run", in_text=False), Column("system")]
    for metric in metrics:
        columns.append(Column(metric, numeric=True, show=lambda r, m=metric: _pair_cell(r, m), in_data=False))
        columns += [Column(f"{metric} {part}", numeric=part != "verdict", in_text=False) for part in PAIR_PARTS]
    rows = []
    for part in comparison.runs:
        by_system: dict[str, dict] = {}
        for pair in part.verdicts.pairs:
            if pair.metric not in metrics:
                continue
            row = by_system.setdefault(pair.system, {"run": part.run_id, "system": pair.system})
            row.update({f"{pair.metric} {key}": getattr(pair, key) for key in PAIR_PARTS})
        rows += list(by_system.values())
    legend = (
        f"cells: mean(system - {against}) [interval at the comparison's level], * = better or worse (the interval "
        f"excludes 0); W/T/L = samples where the system scores better/the same/worse than {against} (by the "
        "metric's direction); n = paired samples. The same pair results as the verdicts below."
    )
    return Table(f"paired differences to {against}", columns, rows, [legend])


def _pair_cell(row: dict, metric: str) -> str:
    diff = row.get(f"{metric} mean_diff")
    if diff is None:
        return "-"
    low, high = row[f"{metric} ci_low"], row[f"{metric} ci_high"]
    interval = f"[{_bound(low)}, {_bound(high)}]" if row[f"{metric} level"] is not None else "[no CI]"
    star = "*" if row[f"{metric} verdict"] in ("better", "worse") else ""
    wins, ties, losses, n, clusters = (row[f"{metric} {k}"] for k in ("wins", "ties", "losses", "n", "n_clusters"))
    from ..analysis.clustered import turns_in

    return f"{diff:+.3f} {interval}{star} {wins}/{ties}/{losses} n={turns_in(n, clusters)}"


def _bound(value) -> str:
    return "open" if value is None else f"{value:+.3f}"


VERDICT_PARTS = ("n", "n_discordant", "mean_diff", "ci_low", "ci_high", "level", "p_value", "p_holm", "effect_size")


def verdicts_table(comparison) -> Table:
    """Every pair verdict of every run (json, csv and markdown); ``n`` reads "N turns in M conversations" when the
    samples are turns of conversations (``n_clusters`` in json and csv)."""
    columns = [Column("run", in_text=False), Column("baseline"), Column("system"), Column("metric")]
    columns += [Column(part, numeric=True, show=_n_text if part == "n" else None) for part in (*VERDICT_PARTS, "mde")]
    columns.insert(5, Column("n_clusters", numeric=True, in_text=False))
    columns += [Column("verdict"), Column("reason")]
    rows = [
        replace_verdict(
            part,
            {"run": part.run_id, "baseline": p.baseline, "system": p.system, "metric": p.metric}
            | {key: getattr(p, key) for key in (*VERDICT_PARTS, "n_clusters", "mde", "verdict", "reason")},
        )
        for part in comparison.runs
        for p in part.verdicts.pairs
    ]
    notes = [part.verdicts.method for part in comparison.runs[:1]]
    return Table("verdicts: each system against the baseline (paired, one procedure)", columns, rows, notes)


def _n_text(row: dict) -> str:
    from ..analysis.clustered import turns_in

    return turns_in(row["n"], row.get("n_clusters"))


def latency_table(comparison) -> Table:
    """p50/p95/p99 latency with intervals per system, and whether it is on the quality-cost-latency frontier."""
    columns = [Column("run", in_text=False), Column("system"), Column("n", numeric=True)]
    for label in ("p50", "p95", "p99"):
        columns += [
            Column(label, header=f"{label} s", numeric=True, show=lambda r, k=label: _quantile_cell(r, k)),
            Column(f"{label} ci_low", numeric=True, in_text=False),
            Column(f"{label} ci_high", numeric=True, in_text=False),
        ]
    columns.append(Column("frontier", show=lambda r: r["frontier"]))
    rows, notes = [], []
    for part in comparison.runs:
        points = {p.system: p for p in part.frontier.points} if part.frontier else {}
        for stats in part.latency:
            row = {"run": part.run_id, "system": stats.system, "n": stats.n}
            for label, q in zip(("p50", "p95", "p99"), stats.quantiles):
                row |= {label: q.value, f"{label} ci_low": q.ci_low, f"{label} ci_high": q.ci_high}
            point = points.get(stats.system)
            row["frontier"] = (
                ""
                if point is None
                else "yes"
                if point.on_frontier
                else ("dominated by " + ", ".join(point.dominated_by))
            )
            rows.append(row)
        if part.frontier is not None:
            f = part.frontier
            notes.append(
                f"frontier of run {part.run_id[:8]}: {', '.join(f.systems)} ({f.basis()})"
                + "".join(f"; {n}" for n in f.notes)
            )
    legend = "latency quantiles in seconds over ok outputs, [95% percentile-bootstrap interval]"
    return Table("latency and the quality-cost-latency frontier", columns, rows, [legend, *notes])


def _quantile_cell(row: dict, label: str) -> str:
    value, low, high = row[label], row[f"{label} ci_low"], row[f"{label} ci_high"]
    if value is None:
        return "-"
    return f"{value:.4f}" + ("" if low is None else f"\n[{low:.4f}, {high:.4f}]")


def variance_table(comparison) -> Table:
    """The run-to-run spread of each repeated metric, and whether differences exceed it."""
    rows = []
    for part in comparison.runs:
        for r in part.spreads:
            s, v = r.spread, r.versus
            rows.append(
                {
                    "run": part.run_id,
                    "metric": r.label,
                    "system": r.system,
                    "repeats": s.repeats,
                    "n": s.n,
                    "mean": s.mean,
                    "min": s.low,
                    "max": s.high,
                    "sd": s.sd,
                    "reference": r.reference,
                    "difference": v.difference if v else None,
                    "exceeds spread": v.exceeds if v else None,
                }
            )
    columns = [
        Column("run", in_text=False),
        Column("metric"),
        Column("system"),
        Column("repeats", numeric=True),
        Column("n", numeric=True),
        Column("mean", numeric=True),
        Column("min-max", show=lambda r: f"{number_text(r['min'])}-{number_text(r['max'])}", in_data=False),
        Column("min", numeric=True, in_text=False),
        Column("max", numeric=True, in_text=False),
        Column("sd", numeric=True),
        Column("reference", in_text=False),
        Column("vs reference", show=_versus, in_data=False),
        Column("difference", numeric=True, in_text=False),
        Column("exceeds spread", in_text=False),
    ]
    legend = (
        "run-to-run spread of each repeated metric: mean of the per-repeat means over the samples scored in every "
        "repeat (n), their min-max and standard deviation; vs reference: difference of the means, 'exceeds' when the "
        "two min-max ranges do not overlap, 'within spread' otherwise"
    )
    return Table("run-to-run variance", columns, rows, [legend], id_columns=("metric", "system"))


def _versus(row: dict) -> str:
    if row["difference"] is None:
        return ""
    verdict = "exceeds" if row["exceeds spread"] else "within spread"
    return f"{row['difference']:+.3f} {verdict} ({row['reference']})"
