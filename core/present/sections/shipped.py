"""ragassay's own sections: the default plugin of the presentation wing, registered through ``register_sections``
like any plugin's (:mod:`.registered` adds it to the plugin host when the report or the app first needs sections).

Registered in the order of ``ragassay serve``'s tabs and pages: the comparison page (conclusion, verdicts,
comparison, paired verdicts), breakdowns (breakdowns, metric correlation, GRAMMAR), conversations, trajectories,
cost and latency, the failure browser, robustness and drift. ``report_order`` gives the HTML report's reading
order: conclusion, verdicts, comparison, paired verdicts, latency, breakdowns, conversations, trajectories, cost,
correlation, GRAMMAR, robustness, drift. What each shows is built by :mod:`.tables`, :mod:`.breakdowns`,
:mod:`.conversations`, :mod:`.trajectories`, :mod:`.robustness` and :mod:`.trend`; values several sections use
(the comparison, the GRAMMAR report) are computed once per run and settings through ``view.shared``.
"""

from __future__ import annotations

from ...components import RunSection
from ...plugin_manager import hookimpl


def compared(view):
    """``compare`` of the view's run with its baseline, alpha and seed (the comparison, cost and latency share it)."""
    from ...analysis.comparison import compare

    settings = view.settings
    return view.shared(("compare", settings), lambda: compare([view.run], **dict(settings)))


def grammar_of(view):
    """The GRAMMAR report of the view's run and "", or None and why there is none (computed once per run: the
    conclusion and the GRAMMAR view share it)."""
    from ...analysis.report import grammar_or_reason

    return view.shared(("grammar report",), lambda: grammar_or_reason(view.grouped_run))


class Conclusion(RunSection):
    """What the run shows, in a few plain sentences: shown better or worse and by how much, what cannot be decided
    yet and how many samples would settle it, and the module to fix first where GRAMMAR blame exists."""

    name = "conclusion"
    tab = "comparison"
    report_order = 1

    def sections(self, view):
        from ...analysis.conclusion import run_conclusion
        from .tables import conclusion_section

        return conclusion_section(run_conclusion(compared(view).runs[0], grammar_of(view)[0]))


class Verdicts(RunSection):
    """The verdicts in plain sentences, naming the baseline, alpha, seed and method."""

    name = "verdicts"
    tab = "comparison"
    report_order = 10

    def sections(self, view):
        from ...analysis.sentences import verdict_sentences
        from .tables import verdict_section

        verdicts = compared(view).runs[0].verdicts
        return verdict_section(verdicts, verdict_sentences(verdicts))


class Comparison(RunSection):
    """Mean, 95% interval, n and unscored per system and metric, the best mean of each column in bold."""

    name = "comparison"
    report_order = 20

    def sections(self, view):
        from .tables import comparison_section

        result = compared(view)
        return comparison_section(result.runs[0].verdicts, result.hidden)


class Pairs(RunSection):
    """Each system against the baseline per metric: difference, interval, Holm p, d_z, MDE, verdict."""

    name = "pairs"
    report_order = 30

    def sections(self, view):
        from .tables import pairs_section

        return pairs_section(compared(view).runs[0].verdicts)


class Breakdowns(RunSection):
    """Breakdowns by the declared sample fields, with box plots per group."""

    name = "breakdowns"
    page = tab = "breakdowns"
    report_order = 50

    def sections(self, view):
        return view.shared(("breakdowns", view.seed), lambda: _breakdowns(view.grouped_run, view.seed))


def _breakdowns(run, seed: int):
    from ...analysis.breakdown import breakdown
    from ...analysis.report import breakdown_choice
    from .breakdowns import breakdowns_section

    chosen = breakdown_choice(run)
    return breakdowns_section(run, [breakdown(run, field, seed=seed) for field in chosen.fields], chosen.skipped)


class Correlation(RunSection):
    """The metric correlation matrix (Pearson r over every system and sample both scored)."""

    name = "correlation"
    page = "breakdowns"
    report_order = 70

    def sections(self, view):
        from .breakdowns import correlation_section

        return view.shared(("correlation",), lambda: correlation_section(view.grouped_run))


class Grammar(RunSection):
    """The GRAMMAR view for grouped samples (gap, robust, non-robust groups, Acc, R, blame), else why not."""

    name = "grammar"
    page = "breakdowns"
    report_order = 80

    def sections(self, view):
        from .tables import grammar_section

        return view.shared(("grammar",), lambda: grammar_section(*grammar_of(view)))


class Conversations(RunSection):
    """Quality by turn depth and answerability class, answerability behaviour (per-class recall, balanced accuracy)
    and where conversations first failed, for a run with conversation turns. Its page lists the conversations,
    each linked to its own page (:mod:`ragassay.present.serve.conversations`)."""

    name = "conversations"
    page = tab = "conversations"
    report_order = 55

    def absent(self, run):
        from ...analysis.conversations import is_turn_run

        return "" if is_turn_run(run) else "has no conversation turn: no conversations to show"

    def sections(self, view):
        from .conversations import conversations_section

        return view.shared(("conversations", view.seed), lambda: conversations_section(view.run, view.seed))


class Trajectories(RunSection):
    """Where agents' trajectories fail (the blamed step's kind and hop, the first hop no retrieval found), the
    steps they take by kind and the cost of the extra hops per system, for a run where some output carries a
    trajectory (:mod:`ragassay.analysis.trajectories_report`)."""

    name = "trajectories"
    page = tab = "trajectories"
    report_order = 57

    def absent(self, run):
        from ...analysis.trajectories_report import may_have_trajectories

        if may_have_trajectories(run):
            return ""
        return "has no multi-hop sample, expected tool call or trajectory metric: no trajectories to show"

    def sections(self, view):
        return view.shared(("trajectories", view.settings), lambda: _trajectories(view))


def _trajectories(view):
    from ...analysis.trajectories_report import may_have_trajectories, trajectory_report
    from .trajectories import trajectories_section

    if not may_have_trajectories(view.run):
        return None
    run = view.payload_run
    if not run.has_payloads:
        return None  # a view of a run given without its outputs' JSON and no way to read them
    report = trajectory_report(run, seed=view.seed)
    if report is None:
        return None
    frontier = compared(view).runs[0].frontier if len(view.run.systems) > 1 else None
    return trajectories_section(report, frontier)


class Cost(RunSection):
    """The cost view: tokens, calls, cost, latency, evaluation cost and quality per dollar per system."""

    name = "cost"
    page = "cost"
    tab = "cost and latency"
    report_order = 60

    def sections(self, view):
        from ...analysis.cost_view import cost_view
        from ...analysis.latency import quality_metric
        from ...errors import RagassayError
        from .tables import cost_section

        part = compared(view).runs[0]
        verdicts = part.verdicts
        metric = quality_metric(view.run.columns, verdicts.family, verdicts.constant)  # the frontier's metric
        try:
            found = cost_view(view.run, metric, baseline=verdicts.baseline, seed=view.seed, latency=part.latency)
        except RagassayError as exc:
            return cost_section(None, str(exc))
        return cost_section(found, "")


class Latency(RunSection):
    """p50/p95/p99 latency per system with intervals, and the quality-cost-latency frontier."""

    name = "latency"
    page = "cost"
    report_order = 40

    def sections(self, view):
        from .tables import latency_section

        return latency_section(compared(view).runs[0])


class FailureBrowser(RunSection):
    """The failure browser's tab: every system's output for the worst samples, filtered.

    Its page (filters, pages of rows, a page per sample: :mod:`ragassay.present.serve.failures`) and the report's
    browser after every run are drawn by the wing's own templates; sections that name page ``failures`` show
    above the browser.
    """

    name = "failures"
    page = tab = "failures"
    report_order = None

    def sections(self, view):
        return []


class Robustness(RunSection):
    """The robustness profile, for a run with perturbed systems."""

    name = "robustness"
    page = tab = "robustness"
    report_order = 90

    def absent(self, run):
        from ...analysis.robustness import perturbations

        return "" if perturbations(run) else "has no perturbed system: no robustness profile"

    def sections(self, view):
        from .robustness import robustness_section

        return robustness_section(view.run, view.alpha, view.seed)


class Drift(RunSection):
    """Drift over time per day (or per week: ?by=week), for a run scored from traces."""

    name = "drift"
    page = tab = "drift"
    report_order = 100

    def absent(self, run):
        from ...analysis.trend import trace_starts

        return (
            ""
            if any(start is not None for start in trace_starts(run))
            else "has no sample from a trace: no drift to show"
        )

    def sections(self, view):
        from ...errors import ConfigError
        from .trend import trend_section

        by = view.params.get("by", "day")
        if by not in ("day", "week"):
            raise ConfigError(f"by={by!r}: give day or week")
        return trend_section(view.run, view.alpha, view.seed, by)


SHIPPED = [
    Conclusion,
    Verdicts,
    Comparison,
    Pairs,
    Breakdowns,
    Correlation,
    Grammar,
    Conversations,
    Trajectories,
    Cost,
    Latency,
    FailureBrowser,
    Robustness,
    Drift,
]


@hookimpl
def register_sections(register):
    for section in SHIPPED:
        register(section)
