"""The trajectories section of the HTML report and ``ragassay serve``: per system, where trajectories fail (the
blamed step's kind and hop, the first hop no retrieval found, each hop's found share), the steps a trajectory
takes by kind, and the cost of the extra hops (tokens and latency per answer and per retrieval step, the paired
extra over the single-shot system, whether the system is on the quality-cost-latency frontier)
(:mod:`ragassay.analysis.trajectories_report`). Shown only for a run where some output carries a trajectory."""

from __future__ import annotations

from ...analysis.trajectories import KINDS
from ..blocks import Cell, Note, Section, Table
from ..templating import interval, num

ANCHOR, TITLE = "trajectories", "Trajectories"
LEGEND = (
    "per system over its ok outputs; means with 95% intervals that resample clusters (a conversation's turns "
    "together; cluster-bootstrap BCa), n: samples (clusters). Blame: the run's step_blame (exact, per-hop gold), "
    "else step_blame_judge; hops: the per-hop metric's details (docs/agents.md)."
)


def trajectories_section(report, frontier=None) -> Section | None:
    """The section of a :class:`ragassay.analysis.trajectories_report.TrajectoryReport` (None: no trajectory, no
    section); ``frontier``: the run's :class:`ragassay.analysis.latency.Frontier`, when it has one."""
    if report is None:
        return None
    single = (
        f"the single-shot system is {report.single_shot}: extra cost is per sample over it, paired"
        if report.single_shot
        else "no single-shot system (every system hops): no extra cost"
    )
    parts: list = [Note(f"{report.trajectories:,} outputs carry a trajectory; {single}.")]
    parts += blame_parts(report.blames)
    parts += hop_parts(report.hops)
    parts.append(steps_table(report.steps))
    parts.append(cost_table(report, frontier))
    return Section(ANCHOR, TITLE, parts, LEGEND)


def estimate_cell(estimate, digits: int = 3) -> Cell:
    """A :class:`ragassay.analysis.trajectories.Estimate` as a cell: value, interval (or why none), n (clusters)."""
    n = f"n={estimate.n} ({estimate.clusters})"
    bounds = interval(estimate.ci_low, estimate.ci_high, digits)
    small = f"{bounds} {n}" if estimate.reason is None else f"{n}, no interval"
    return Cell(num(estimate.value, digits), small, title=estimate.reason or "")


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {count}" for name, count in counts.items()) or "-"


def blame_parts(blames: list) -> list:
    """Per system: judged and failed trajectories, the failed share, and the failures by blame, kind and hop."""
    if not blames:
        return [Note("No step_blame or step_blame_judge metric in this run: no blamed step to count.")]
    rows = [
        [
            b.system,
            num(b.judged),
            num(b.failed),
            estimate_cell(b.failed_share),
            _counts(dict(sorted(b.by_blame.items(), key=lambda kv: -kv[1]))),
            _counts(dict(sorted(b.by_kind.items(), key=lambda kv: -kv[1]))),
            _counts(b.by_hop),
            _counts(b.sources),
        ]
        for b in blames
    ]
    headers = ["system", "judged", "failed", "failed share", "blame", "blamed step kind", "blamed hop", "judged by"]
    return [Table(headers, rows, caption="where trajectories fail: the blamed step (failed trajectories)")]


def hop_parts(hops: list) -> list:
    """Per system: how many samples first failed at each hop, and each hop's found share."""
    if not hops:
        return [Note("No per-hop metric (hop_coverage, hop_recall, ...) in this run: no hop to show.")]
    firsts = list(dict.fromkeys(k for h in hops for k in h.first_failed))
    firsts = sorted((k for k in firsts if k.isdigit()), key=int) + [k for k in firsts if not k.isdigit()]
    indices = sorted({i for h in hops for i in h.found})
    rows = []
    for h in hops:
        counts = [num(h.first_failed.get(k, 0)) for k in firsts]
        shares = [estimate_cell(h.found[i]) if i in h.found else "-" for i in indices]
        rows.append([h.system, num(h.samples), *counts, *shares])
    headers = ["system", "samples", *(f"first failed: hop {k}" if k.isdigit() else "every hop found" for k in firsts)]
    headers += [f"found: hop {i}" for i in indices]
    notes = [
        f"from the details of {hops[0].metric}; found: the share of the samples with that hop whose gold some "
        "retrieval found"
    ]
    return [Table(headers, rows, caption="where trajectories fail: the first hop no retrieval found", notes=notes)]


def steps_table(steps: list) -> Table:
    """Per system with trajectories: the mean steps of each kind per trajectory, and in all."""
    kinds = [k for k in KINDS if any(k in s.per_kind for s in steps)]
    rows = [
        [
            s.system,
            num(s.trajectories),
            *(estimate_cell(s.per_kind[k]) if k in s.per_kind else num(0.0) for k in kinds),
            estimate_cell(s.total),
            num(s.nested),
        ]
        for s in steps
    ]
    headers = ["system", "trajectories", *kinds, "all steps", "with a nested agent"]
    return Table(headers, rows, caption="steps per trajectory, by kind (nested agents' steps included)")


def cost_table(report, frontier=None) -> Table:
    """Per system: retrieval steps, tokens and latency per answer and per retrieval step, the extra over the
    single-shot system, and whether it is on the frontier."""
    extra = {e.system: e for e in report.extra}
    on = {p.system: p.on_frontier for p in frontier.points} if frontier is not None else {}
    rows = []
    for c in report.costs:
        e = extra.get(c.system)
        rows.append(
            [
                c.system,
                num(c.outputs),
                num(c.trajectories),
                estimate_cell(c.retrieval_steps),
                estimate_cell(c.tokens, 1),
                estimate_cell(c.latency_s),
                num(c.tokens_per_retrieval, 1),
                num(c.latency_per_retrieval),
                estimate_cell(e.tokens, 1) if e else "-",
                estimate_cell(e.latency_s) if e else "-",
                ("yes" if on[c.system] else "no") if c.system in on else "-",
            ]
        )
    headers = ["system", "answered", "trajectories", "retrieval steps", "tokens", "latency s"]
    headers += ["tokens per retrieval", "latency per retrieval", "extra tokens", "extra latency s", "on the frontier"]
    basis = f"{frontier.basis()} (the cost page)" if frontier is not None else "no frontier for this run"
    notes = [
        "tokens: input + output per answer; per retrieval: all tokens (latency) / all retrieval steps; an answer "
        f"without a trajectory counts one retrieval step when it returned a context. The frontier: {basis}."
    ]
    return Table(headers, rows, caption="the cost of the extra hops", notes=notes)
