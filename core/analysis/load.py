"""Reading a stored run as GRAMMAR outcomes: one per (system, sample), correct or not, with retrieved documents.

Correctness comes from one judge (``[analysis] judge``, default: the run's first judge). Outputs that failed,
were never produced (an interrupted run) or whose judgement is unscored are left out and counted, never
silently dropped. A sample without ``group_id`` forms a group of its own.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from typing import Any

from pydantic import ValidationError

from ..errors import ConfigError, StoreError
from ..models import RAGOutput, Sample
from ..store.database import ResultsStore
from .groups import Outcome
from .settings import AnalysisSection


@dataclasses.dataclass
class RunOutcomes:
    """A stored run read for analysis."""

    run: dict[str, Any]
    judge: str
    settings: AnalysisSection
    systems: list[str]
    outcomes: dict[str, list[Outcome]]
    excluded: dict[str, dict[str, int]]  # system -> reason -> count
    ungrouped: int = 0  # samples without a group id


def run_settings(run: dict[str, Any]) -> AnalysisSection:
    """The ``[analysis]`` section stored with the run's config."""
    try:
        data = json.loads(run["config_json"]).get("analysis") or {}
        return AnalysisSection.model_validate(data)
    except (ValueError, ValidationError) as exc:
        raise StoreError(f"run {run['id'][:12]}: its stored [analysis] settings cannot be read: {exc}") from None


def pick_judge(run: dict[str, Any], wanted: str | None) -> str:
    """The judge whose verdicts define correctness; errors say what the run has."""
    judges = list(json.loads(run["spec_json"]).get("judges", {}))
    if not judges:
        raise ConfigError(
            f"run {run['id'][:12]} has no judge, so no answer is known to be correct. Add "
            '[evaluation] judges = ["match"] (or an LLM judge such as "grammar_llm") and run again.'
        )
    if wanted is None:
        return judges[0]
    if wanted not in judges:
        raise ConfigError(
            f"[analysis] judge = '{wanted}' did not judge run {run['id'][:12]}; its judges: {', '.join(judges)}"
        )
    return wanted


def _documents(output: RAGOutput | None) -> frozenset[str] | None:
    if output is None:
        return None
    ids = output.context_document_ids or output.context_ids
    return frozenset(ids) if ids else None


def load_run(store: ResultsStore, run_id: str, settings: AnalysisSection | None = None) -> RunOutcomes:
    """Read run ``run_id`` (id or unique prefix) into outcomes per system."""
    run = store.get_run(run_id)
    settings = settings or run_settings(run)
    judge = pick_judge(run, settings.judge)
    samples = store.run_samples(run["id"])
    verdicts = {(r["system"], r["question_id"]): r for r in store.judgement_rows(run["id"]) if r["judge"] == judge}
    payloads = {(system, qid): output for system, qid, output in store.output_payloads(run["id"])}
    outputs = {
        (r["system"], r["question_id"]): (r["status"], payloads.get((r["system"], r["question_id"])))
        for r in store.output_rows(run["id"])
    }
    systems = [s["name"] for s in store.run_systems(run["id"])]
    result = RunOutcomes(run, judge, settings, systems, {}, {}, ungrouped=sum(1 for s in samples if s.group_id is None))
    for system in systems:
        result.outcomes[system], result.excluded[system] = _system_outcomes(
            system, samples, outputs, verdicts, settings.correct_threshold
        )
    return result


def _system_outcomes(
    system: str, samples: list[Sample], outputs: dict, verdicts: dict, threshold: float
) -> tuple[list[Outcome], dict[str, int]]:
    outcomes: list[Outcome] = []
    excluded: Counter[str] = Counter()
    for sample in samples:
        key = (system, sample.question_id)
        status, output = outputs.get(key, (None, None))
        verdict = verdicts.get(key)
        if status is None:
            excluded["missing"] += 1
        elif status != "ok":
            excluded["failed"] += 1
        elif verdict is None or (verdict["score"] is None and verdict["verdict"] not in ("correct", "incorrect")):
            excluded["unscored"] += 1
        else:
            correct = verdict["verdict"] == "correct" or (
                verdict["score"] is not None and verdict["score"] >= threshold
            )
            outcomes.append(
                Outcome(
                    sample.question_id,
                    sample.group_id or f"(sample) {sample.question_id}",
                    correct,
                    sample.attributes,
                    _documents(output),
                    frozenset(sample.reference_context_ids),
                )
            )
    return outcomes, {k: excluded.get(k, 0) for k in ("failed", "unscored", "missing")}
