"""Reading a stored run as GRAMMAR outcomes: one per (system, sample), correct or not, with retrieved documents.

Correctness comes from one judge (``[analysis] judge``, default: the run's first judge). Outputs that failed,
were never produced (an interrupted run) or whose judgement is unscored are left out and counted, never
silently dropped. A sample without ``group_id`` forms a group of its own.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from pydantic import ValidationError

from ..config.analysis import AnalysisSection
from ..errors import ConfigError, StoreError
from ..models import RAGOutput, Sample
from .groups import Outcome


@dataclasses.dataclass
class RunOutcomes:
    """A stored run read for the GRAMMAR analysis."""

    run_id: str
    project: str
    judge: str
    settings: AnalysisSection
    systems: list[str]
    outcomes: dict[str, list[Outcome]]
    excluded: dict[str, dict[str, int]]  # system -> reason -> count
    ungrouped: int = 0  # samples without a group id


def run_settings(run) -> AnalysisSection:
    """The ``[analysis]`` section stored with the run's config (``run``: :class:`ragassay.results.RunData`)."""
    try:
        return AnalysisSection.model_validate(run.info.config.get("analysis") or {})
    except ValidationError as exc:
        raise StoreError(f"run {run.id[:12]}: its stored [analysis] settings cannot be read: {exc}") from None


def pick_judge(run, wanted: str | None) -> str:
    """The judge whose verdicts define correctness; errors say what the run has."""
    judges = list(run.info.spec.get("judges") or {})
    if not judges:
        raise ConfigError(
            f"run {run.id[:12]} has no judge, so no answer is known to be correct. Add "
            '[evaluation] judges = ["match"] (or an LLM judge such as "grammar_llm") and run again.'
        )
    if wanted is None:
        return judges[0]
    if wanted not in judges:
        raise ConfigError(
            f"[analysis] judge = '{wanted}' did not judge run {run.id[:12]}; its judges: {', '.join(judges)}"
        )
    return wanted


def _documents(output: RAGOutput | None) -> frozenset[str] | None:
    if output is None:
        return None
    ids = output.context_document_ids or output.context_ids
    return frozenset(ids) if ids else None


def run_outcomes(run, settings: AnalysisSection | None = None) -> RunOutcomes:
    """The outcomes per system of ``run`` (:class:`ragassay.results.RunData`, read with payloads)."""
    settings = settings or run_settings(run)
    judge = pick_judge(run, settings.judge)
    verdicts = {(s.system, s.question_id): s for s in run.records(kind="judge", label=judge, repeat=0)}
    samples = run.samples
    result = RunOutcomes(
        run.id,
        run.info.project,
        judge,
        settings,
        list(run.systems),
        {},
        {},
        ungrouped=sum(1 for s in samples if s.group_id is None),
    )
    for system in run.systems:
        result.outcomes[system], result.excluded[system] = _system_outcomes(
            run, system, samples, verdicts, settings.correct_threshold
        )
    return result


def _system_outcomes(run, system: str, samples: list[Sample], verdicts: dict, threshold: float):
    outcomes: list[Outcome] = []
    excluded: Counter[str] = Counter()
    for sample in samples:
        key = (system, sample.question_id)
        status, verdict = run.status(*key), verdicts.get(key)
        if status == "missing":
            excluded["missing"] += 1
        elif status != "ok":
            excluded["failed"] += 1
        elif verdict is None or (verdict.value is None and verdict.verdict not in ("correct", "incorrect")):
            excluded["unscored"] += 1
        else:
            correct = verdict.verdict == "correct" or (verdict.value is not None and verdict.value >= threshold)
            outcomes.append(
                Outcome(
                    sample.question_id,
                    sample.group_id or f"(sample) {sample.question_id}",
                    correct,
                    sample.attributes,
                    _documents(run.payload(*key)),
                    frozenset(sample.reference_context_ids),
                )
            )
    return outcomes, {k: excluded.get(k, 0) for k in ("failed", "unscored", "missing")}
