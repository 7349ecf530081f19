"""The GRAMMAR report of a stored run, as plain data (``ragassay report`` renders it; ``--json`` prints it).

Per system: the group counts (gap, robust, non-robust), R (Eq. 1), Acc (Eq. 2), knowledge accuracy, the
modular blame of wrong answers (context comparison, and ground truth where reference documents are known),
R and Acc of the retrieval alone (LM-induced failures excluded), and for each hypothesis about the system (its
``systems``, default every system) the Table 2 rows, each answer with a bootstrap interval of the difference.
"""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..store.database import ResultsStore
from .groups import GAP, Outcome, categorize, score
from .hypotheses import hypothesis_table
from .load import RunOutcomes, load_run
from .modular import blame_counts, context_blame, ground_truth_blame, has_references, without_lm_failures
from .settings import AnalysisSection

GAP_EXAMPLES = 5


def grammar_report(store: ResultsStore, run_id: str, settings: AnalysisSection | None = None) -> dict[str, Any]:
    """The whole report of run ``run_id``; ``settings`` default to the run's stored ``[analysis]``."""
    loaded = load_run(store, run_id, settings)
    return report_from_outcomes(loaded)


def report_from_outcomes(loaded: RunOutcomes) -> dict[str, Any]:
    settings = loaded.settings
    check_hypothesis_systems(settings, loaded.systems)
    return {
        "run": loaded.run["id"],
        "project": loaded.run["project"],
        "judge": loaded.judge,
        "ungrouped_samples": loaded.ungrouped,
        "settings": settings.model_dump(mode="json"),
        "systems": [
            system_report(name, loaded.outcomes[name], loaded.excluded[name], settings) for name in loaded.systems
        ],
    }


def system_report(
    name: str, outcomes: list[Outcome], excluded: dict[str, int], settings: AnalysisSection
) -> dict[str, Any]:
    """One system: overall scores, modular blame, retrieval-only scores, hypotheses."""
    categories = categorize(outcomes)
    blame = context_blame(outcomes, categories, settings.context_match)
    entry: dict[str, Any] = {
        "system": name,
        "excluded": excluded,
        "overall": score(outcomes, categories).as_dict(),
        "blame": blame_counts(blame),
        "retrieval_only": score(without_lm_failures(outcomes, blame)).as_dict(),
        "blame_ground_truth": None,
        "retrieval_only_ground_truth": None,
        "gap_examples": _gap_examples(outcomes, categories),
    }
    if has_references(outcomes):
        truth = ground_truth_blame(outcomes)
        entry["blame_ground_truth"] = blame_counts(truth)
        entry["retrieval_only_ground_truth"] = score(without_lm_failures(outcomes, truth)).as_dict()
    entry["hypotheses"] = [
        {
            "name": h.name,
            "attribute": h.attribute,
            "robust": h.robust,
            "non_robust": h.non_robust,
            "rows": [row.as_dict() for row in hypothesis_table(outcomes, h, settings.sampling, settings.context_match)],
        }
        for h in settings.hypotheses
        if not h.systems or name in h.systems
    ]
    return entry


def check_hypothesis_systems(settings: AnalysisSection, systems: list[str]) -> None:
    """A hypothesis naming a system the run does not have is a ConfigError listing the run's systems."""
    for h in settings.hypotheses:
        unknown = [s for s in h.systems if s not in systems]
        if unknown:
            raise ConfigError(
                f"[[analysis.hypotheses]] '{h.name}': systems = {unknown} are not in the run; "
                f"its systems: {', '.join(systems)}"
            )


def _gap_examples(outcomes: list[Outcome], categories: dict[str, str]) -> list[dict[str, Any]]:
    """A few gap groups with their query logic: what the knowledge base (or the system) cannot answer."""
    examples, seen = [], set()
    for outcome in outcomes:
        gid = outcome.group_id
        if categories[gid] != GAP or gid in seen:
            continue
        seen.add(gid)
        examples.append({"group_id": gid, "sql": outcome.attributes.get("sql"), "question_id": outcome.question_id})
        if len(examples) >= GAP_EXAMPLES:
            break
    return examples
