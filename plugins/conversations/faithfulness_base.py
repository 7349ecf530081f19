"""The plumbing of the turn support rates (``turn_context_support``, ``turn_history_support``,
``turn_unsupported``) that the judge-based (:mod:`.faithfulness`) and offline (:mod:`.faithfulness_offline`)
variants share: one support run per output shared by the three rates, the share of one class, the details."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, ClassVar

from pydantic import BaseModel

from ragassay import Metric, MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugins.claims.sharing import SharedRuns

from .turn_judging import not_a_turn, options_key, output_key

SUPPORTS = ("context", "history", "none")
SOURCE = (
    "issue 39 (support by this turn's context vs an earlier turn); claim-level checking after RAGChecker "
    "(Ru et al., 2024, arXiv:2408.08067, section 3); DeepEval's TurnFaithfulnessMetric as the single-score peer"
)


def claim_row(text: str, support: str, turn: int | None, context: int | None, explanation: str) -> dict[str, Any]:
    """One entry of ``details["claims"]`` (``context`` is 0-based)."""
    return {"text": text, "support": support, "turn": turn, "context": context, "explanation": explanation}


class TurnSupportMetric(Metric):
    """The plumbing of the three rates: one support run per output, shared; the share of one class."""

    support_class: ClassVar[str]
    family: ClassVar[str]
    #: Set on an offline variant: stored as ``details["offline"]`` (what makes it weak).
    weak: ClassVar[str | None] = None
    value_range = (0.0, 1.0)

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        self._shared().register(self.shared_key(), self.name, frozenset())

    def _shared(self) -> SharedRuns:
        return self.context.shared(("ragassay.plugins.conversations", "support"), SharedRuns)

    def shared_key(self) -> Hashable:
        return options_key(self.family, self.options)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("a turn support metric is asynchronous: use ascore")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if (skipped := not_a_turn(sample)) is not None:
            return skipped
        run, owner = await self._shared().get(
            self.shared_key(), output_key(sample, output), self.name, lambda: self.supports(sample, output)
        )
        shared = {"claims_with": owner} if owner is not None else {}
        if isinstance(run, Unscored):
            return Unscored(reason=run.reason, details={**run.details, **shared})
        claims, explanation = run
        counts = {kind: sum(c["support"] == kind for c in claims) for kind in SUPPORTS}
        details = {"claims": claims, "counts": counts, "explanation": explanation, "judge": self.judge_name()}
        details.update(shared)
        if self.weak is not None:
            details["offline"] = self.weak
        if not claims:
            return Unscored(reason="the answer makes no claim: no share of claims is defined", details=details)
        return MetricResult(value=counts[self.support_class] / len(claims), details=details)

    async def supports(self, sample: Sample, output: RAGOutput) -> tuple[list[dict[str, Any]], str] | Unscored:
        """(the claims as ``details["claims"]`` rows, an explanation), or Unscored."""
        raise NotImplementedError

    def judge_name(self) -> str:
        raise NotImplementedError


TITLES = {
    "context": ("turn_context_support", "higher", "claims supported by this turn's retrieved contexts / claims"),
    "history": ("turn_history_support", "higher", "claims supported only by an earlier turn / claims"),
    "none": ("turn_unsupported", "lower", "claims supported by neither / claims"),
}


def rate_classes(base: type[TurnSupportMetric], suffix: str, doc: str) -> list[type[TurnSupportMetric]]:
    """The three rate metrics on ``base``: ``turn_context_support``, ``turn_history_support``,
    ``turn_unsupported`` (each name followed by ``suffix``)."""
    classes = []
    for kind, (name, direction, formula) in TITLES.items():
        attributes = {
            "__doc__": f"Share of the turn's answer claims whose support is '{kind}' ({formula}){doc}.",
            "__module__": base.__module__,
            "name": name + suffix,
            "support_class": kind,
            "direction": direction,
            "formula": formula,
            "source": SOURCE,
        }
        classes.append(type(name + suffix, (base,), attributes))
    return classes
