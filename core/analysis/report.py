"""The report of a stored run: the general report for any run, and the GRAMMAR section for grouped samples.

:func:`run_report` (``ragassay report``): the conclusion it opens with (:mod:`.conclusion`), the comparison and
verdicts (:mod:`.comparison`), breakdowns by the declared sample fields (``[analysis] breakdowns``, default: the
fields with 2 to 8 distinct values; every other field is named with the reason it is left out:
:func:`breakdown_choice`), the cost view (:mod:`.cost_view`), and :func:`grammar_report` only when the samples
carry a ``group_id``.

:func:`grammar_report`, per system: the group counts (gap, robust, non-robust), R (Eq. 1), Acc (Eq. 2), knowledge
accuracy, the modular blame of wrong answers (context comparison, and ground truth where reference documents are
known), R and Acc of the retrieval alone (LM-induced failures excluded), and for each hypothesis about the system
the Table 2 rows, each answer with a bootstrap interval of the difference. The paper's vocabulary (Eq. 1, lambda)
stays in docs/grammar.md; what people read names the idea ("robust groups: every phrasing answered correctly").
"""

from __future__ import annotations

import dataclasses

from ..config.analysis import AnalysisSection
from ..errors import ConfigError, RagassayError
from .groups import GAP, Outcome, Scores, categorize, score
from .hypotheses import ClusterRow, hypothesis_table
from .load import RunOutcomes, run_outcomes
from .modular import blame_counts, context_blame, ground_truth_blame, has_references, without_lm_failures

GAP_EXAMPLES = 5
MAX_GROUPS = 8  # a field with 2 to this many distinct values gets an automatic breakdown
MAX_BREAKDOWNS = 4
NOT_GROUPING = {"question_id", "question", "reference_answers", "reference_contexts", "reference_context_ids"}


@dataclasses.dataclass(frozen=True)
class Blame:
    """How many wrong answers each module is blamed for."""

    lm: int
    retrieval: int
    undetermined: int

    @classmethod
    def of(cls, blame: dict[str, str]) -> Blame:
        counts = blame_counts(blame)
        return cls(counts["lm"], counts["retrieval"], counts["undetermined"])


@dataclasses.dataclass(frozen=True)
class GapExample:
    """A gap group (no phrasing answered correctly) with its query logic."""

    group_id: str
    sql: str | None
    question_id: str


@dataclasses.dataclass(frozen=True)
class HypothesisResult:
    """One ``[[analysis.hypotheses]]`` for one system: its clusters and its Table 2 rows."""

    name: str
    attribute: str
    robust: list
    non_robust: list
    rows: list[ClusterRow]


@dataclasses.dataclass(frozen=True)
class SystemGrammar:
    """One system's GRAMMAR analysis."""

    system: str
    excluded: dict[str, int]  # failed / unscored / missing -> count
    overall: Scores
    blame: Blame  # by context comparison (non-robust groups)
    retrieval_only: Scores
    blame_ground_truth: Blame | None  # by reference documents, where the samples name them
    retrieval_only_ground_truth: Scores | None
    gap_examples: list[GapExample]
    hypotheses: list[HypothesisResult]


@dataclasses.dataclass(frozen=True)
class GrammarReport:
    """The GRAMMAR section of a run's report."""

    run_id: str
    project: str
    judge: str
    ungrouped_samples: int
    settings: AnalysisSection
    systems: list[SystemGrammar]


@dataclasses.dataclass(frozen=True)
class RunReport:
    """Everything ``ragassay report`` shows of one run; a section that cannot be made says why."""

    run_id: str
    project: str
    comparison: object  # ragassay.analysis.comparison.Comparison
    breakdowns: list  # ragassay.analysis.breakdown.Breakdown
    cost: object | None  # ragassay.analysis.cost_view.CostView
    cost_reason: str
    grammar: GrammarReport | None
    grammar_reason: str
    breakdowns_skipped: dict[str, str] = dataclasses.field(default_factory=dict)  # field -> why not broken down
    conclusion: object = None  # ragassay.analysis.conclusion.Conclusion: what the report opens with


def run_report(run, *, baseline: str | None = None, alpha: float = 0.05, seed: int = 0, family=None) -> RunReport:
    """The report of ``run`` (:class:`ragassay.results.RunData`; read with payloads when it has grouped samples)."""
    from .breakdown import breakdown
    from .comparison import compare
    from .conclusion import run_conclusion
    from .cost_view import cost_view
    from .latency import quality_metric

    comparison = compare([run], baseline=baseline, alpha=alpha, seed=seed, family=family)
    verdicts = comparison.runs[0].verdicts
    fields = breakdown_choice(run)
    breakdowns = [breakdown(run, field, seed=seed) for field in fields.fields]
    try:
        latency, metric = comparison.runs[0].latency, quality_metric(run.columns, verdicts.family, verdicts.constant)
        cost = cost_view(run, metric, baseline=verdicts.baseline, seed=seed, latency=latency)
        cost_reason = ""
    except RagassayError as exc:
        cost, cost_reason = None, str(exc)
    grammar, reason = grammar_or_reason(run)
    conclusion = run_conclusion(comparison.runs[0], grammar)
    return RunReport(
        run.id, run.info.project, comparison, breakdowns, cost, cost_reason, grammar, reason, fields.skipped, conclusion
    )


@dataclasses.dataclass(frozen=True)
class BreakdownFields:
    """The sample fields a report breaks down by, and each field it does not, with the reason."""

    fields: list[str]
    skipped: dict[str, str]  # field -> why the report does not break down by it


def breakdown_fields(run) -> list[str]:
    """The fields of :func:`breakdown_choice`."""
    return breakdown_choice(run).fields


def breakdown_choice(run) -> BreakdownFields:
    """``[analysis] breakdowns`` of the run, else the sample fields with 2 to :data:`MAX_GROUPS` distinct values
    (at most :data:`MAX_BREAKDOWNS`, in column order); every other field that has a value is named with the
    reason it is left out (one value, too many values, values that cannot be grouped, past the cap)."""
    declared = ((run.info.config.get("analysis") or {}).get("breakdowns")) if run.info.config else None
    if declared is not None:
        return BreakdownFields(list(declared), {})
    table = run.samples_frame().reset_index()
    fields, skipped = [], {}
    for column in table.columns:
        if column in NOT_GROUPING:
            continue
        reason = _not_grouping(table[column])
        if reason is None and len(fields) == MAX_BREAKDOWNS:
            reason = f"past the first {MAX_BREAKDOWNS} fields"
        if reason is None:
            fields.append(column)
        elif reason:
            skipped[column] = reason
    return BreakdownFields(fields, skipped)


def _not_grouping(values) -> str | None:
    """Why a field cannot group the samples; None when it can, '' when it has no value at all."""
    present = values.dropna()
    try:
        count = present.map(lambda v: v if isinstance(v, (str, int, float, bool)) else repr(v)).nunique()
    except TypeError:
        return "its values cannot be grouped"
    if count == 0:
        return ""
    if count == 1:
        return "one value on every sample"
    if count > MAX_GROUPS:
        return f"{count} distinct values, more than {MAX_GROUPS}"
    return None


def skipped_line(skipped: dict[str, str]) -> str:
    """One sentence naming each field a report did not break down by, with the reason ('' when none)."""
    if not skipped:
        return ""
    named = "; ".join(f"{field}: {why}" for field, why in skipped.items())
    return f"Not broken down by {named} ([analysis] breakdowns names the fields to break down by)."


def grammar_report(run, settings: AnalysisSection | None = None) -> GrammarReport:
    """The GRAMMAR section of ``run`` (read with payloads); ``settings`` default to the run's stored
    ``[analysis]``."""
    return report_from_outcomes(run_outcomes(run, settings))


def report_from_outcomes(loaded: RunOutcomes) -> GrammarReport:
    settings = loaded.settings
    check_hypothesis_systems(settings, loaded.systems)
    systems = [system_report(n, loaded.outcomes[n], loaded.excluded[n], settings) for n in loaded.systems]
    return GrammarReport(loaded.run_id, loaded.project, loaded.judge, loaded.ungrouped, settings, systems)


def system_report(name: str, outcomes: list[Outcome], excluded: dict[str, int], settings: AnalysisSection):
    """One system: overall scores, modular blame, retrieval-only scores, hypotheses."""
    categories = categorize(outcomes)
    blame = context_blame(outcomes, categories, settings.context_match)
    truth = ground_truth_blame(outcomes) if has_references(outcomes) else None
    hypotheses = [
        HypothesisResult(
            h.name,
            h.attribute,
            list(h.robust),
            list(h.non_robust),
            hypothesis_table(outcomes, h, settings.sampling, settings.context_match),
        )
        for h in settings.hypotheses
        if not h.systems or name in h.systems
    ]
    return SystemGrammar(
        system=name,
        excluded=dict(excluded),
        overall=score(outcomes, categories),
        blame=Blame.of(blame),
        retrieval_only=score(without_lm_failures(outcomes, blame)),
        blame_ground_truth=None if truth is None else Blame.of(truth),
        retrieval_only_ground_truth=None if truth is None else score(without_lm_failures(outcomes, truth)),
        gap_examples=_gap_examples(outcomes, categories),
        hypotheses=hypotheses,
    )


def check_hypothesis_systems(settings: AnalysisSection, systems: list[str]) -> None:
    """A hypothesis naming a system the run does not have is a ConfigError listing the run's systems."""
    for h in settings.hypotheses:
        unknown = [s for s in h.systems if s not in systems]
        if unknown:
            raise ConfigError(
                f"[[analysis.hypotheses]] '{h.name}': systems = {unknown} are not in the run; "
                f"its systems: {', '.join(systems)}"
            )


def _gap_examples(outcomes: list[Outcome], categories: dict[str, str]) -> list[GapExample]:
    """A few gap groups with their query logic: what the knowledge base (or the system) cannot answer."""
    examples, seen = [], set()
    for outcome in outcomes:
        gid = outcome.group_id
        if categories[gid] != GAP or gid in seen:
            continue
        seen.add(gid)
        examples.append(GapExample(gid, outcome.attributes.get("sql"), outcome.question_id))
        if len(examples) >= GAP_EXAMPLES:
            break
    return examples


def grammar_or_reason(run) -> tuple[object, str]:
    """The GRAMMAR report of ``run`` and "", or None and why there is none (no grouped sample, or its error)."""
    from ..errors import RagassayError

    if not any(s.group_id is not None for s in run.samples):
        return None, "no sample has a group_id (see docs/grammar.md)"
    try:
        return grammar_report(run), ""
    except RagassayError as exc:
        return None, str(exc)
