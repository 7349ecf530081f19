"""What each claim metric is: its formula (in :mod:`.formulas`), the check lists it reads, its direction.

The check lists each metric needs are RAGChecker's ``METRIC_REQUIREMENTS`` (``ragchecker/metrics.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from . import formulas
from .formulas import Readings, Score

SOURCE = "RAGChecker (Ru et al., 2024, arXiv:2408.08067), section 3.3 and appendix; ragchecker/computation.py"


@dataclasses.dataclass(frozen=True)
class MetricSpec:
    """One RAGChecker metric: its name, the formula, the check lists it reads, whether it reads the answer."""

    name: str
    title: str
    formula: str
    needs: tuple[str, ...]
    function: Callable[..., Score]
    code: str  # the function of ragchecker/computation.py
    uses_answer: bool = True

    @property
    def direction(self) -> str:
        return formulas.METRICS[self.name].direction

    @property
    def doc(self) -> str:
        return f"{formulas.METRICS[self.name].summary}. {self.formula}."

    @property
    def source(self) -> str:
        return f"{SOURCE} {self.code}"

    def needs_with(self, readings: Readings | None) -> frozenset[str]:
        """The check lists this metric reads with ``readings`` (faithfulness' "figure" reading reads more)."""
        extra = ()
        if self.name == "faithfulness" and readings is not None and readings.faithfulness == "figure":
            extra = ("answer2response", "retrieved2answer")
        return frozenset(self.needs + extra)

    def value(self, run: Any, readings: Readings | None) -> tuple[float | None, str | None]:
        """(value, note) from the claim run, or (None, reason) when a check list it needs is missing or the
        formula is undefined."""
        for part in sorted(self.needs_with(readings)):
            if part in run.missing:
                return None, f"{part}: {run.missing[part]}"
        score = self.function(run.checks(), readings or Readings())
        return score.value, score.reason


SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        "precision", "Claim precision", "entailed response claims / response claims (answer2response)",
        ("answer2response",), formulas.precision, "evaluate_precision",
    ),
    MetricSpec(
        "recall", "Claim recall of the answer", "reference claims the response entails / reference claims",
        ("response2answer",), formulas.recall, "evaluate_recall",
    ),
    MetricSpec(
        "f1", "Claim F1", "2 * precision * recall / (precision + recall)",
        ("answer2response", "response2answer"), formulas.f1, "evaluate_f1",
    ),
    MetricSpec(
        "claim_recall", "Retriever claim recall", "reference claims some chunk entails / reference claims",
        ("retrieved2answer",), formulas.claim_recall, "evaluate_retrieval", uses_answer=False,
    ),
    MetricSpec(
        "context_precision", "Retriever context precision", "chunks entailing some reference claim / chunks",
        ("retrieved2answer",), formulas.context_precision, "evaluate_retrieval", uses_answer=False,
    ),
    MetricSpec(
        "context_utilization", "Context utilization",
        "reference claims entailed by a chunk and by the response / reference claims entailed by a chunk",
        ("retrieved2answer", "response2answer"), formulas.context_utilization, "evaluate_context_utilization",
    ),
    MetricSpec(
        "noise_sensitivity_in_relevant", "Noise sensitivity in relevant chunks",
        "incorrect response claims a relevant chunk entails / response claims",
        ("retrieved2response", "answer2response", "retrieved2answer"),
        formulas.noise_sensitivity_in_relevant, "evaluate_noise_sensitivity",
    ),
    MetricSpec(
        "noise_sensitivity_in_irrelevant", "Noise sensitivity in irrelevant chunks",
        "incorrect response claims an irrelevant chunk entails / response claims",
        ("retrieved2response", "answer2response", "retrieved2answer"),
        formulas.noise_sensitivity_in_irrelevant, "evaluate_noise_sensitivity",
    ),
    MetricSpec(
        "hallucination", "Hallucination", "incorrect response claims no chunk entails / response claims",
        ("retrieved2response", "answer2response"), formulas.hallucination, "evaluate_unfaithfulness",
    ),
    MetricSpec(
        "self_knowledge", "Self-knowledge", "correct response claims no chunk entails / response claims",
        ("retrieved2response", "answer2response"), formulas.self_knowledge, "evaluate_unfaithfulness",
    ),
    MetricSpec(
        "faithfulness", "Faithfulness", "response claims some chunk entails / response claims",
        ("retrieved2response",), formulas.faithfulness, "evaluate_faithfulness",
    ),
)  # fmt: skip
