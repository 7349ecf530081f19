"""RAGChecker's metrics as ragassay metrics, all from one shared claim run per output (see :mod:`.sharing`).

Each metric reads the parts of the claim run it needs (RAGChecker's ``METRIC_REQUIREMENTS``) and computes its value
with the pure formula of :mod:`.formulas`. Two families:

- ``rc_<metric>``: claims extracted and checked by an LLM judge (:mod:`.judging`), options on
  :class:`ClaimOptions` (the judge model is required);
- ``rc_<metric>_offline``: sentences as claims and the lexical fact-checker as checker (:mod:`.offline`): no model,
  weak numbers (docs/judges.md says how weak).

Both use the checks already stored in ``output.trace["ragchecker"]`` when present (a replayed RAGChecker result:
no model call). The first claim metric scored for an output stores the claims and every check in its details
(``details["checks"]``, the ClaimChecks layout; explanations, missing parts and failed calls beside); the others
name it in ``details["checks_with"]``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Iterable
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import GeneratorRef, Metric, MetricResult, RAGOutput, Sample, Unscored
from ragassay.llm import JudgeOptions, LLMJudging, answer_text, asks, context_texts, current_repeat, fill
from ragassay.plugins.judges.fact_check import DEFAULT_LEXICAL_THRESHOLD

from . import judging
from .checking import PARTS, ClaimRun, Texts, run_checks
from .formulas import Readings
from .offline import OfflineClaims
from .prompts import CHECKING_PROMPT, EXTRACTION_PROMPT, FORMAT_RULES, PROMPT_VERSION
from .replay import replayed, stored_checks
from .sharing import SharedRuns
from .specs import SPECS, MetricSpec

TRACE_KEY = "ragchecker"


class _CommonOptions(BaseModel):
    # not defer_build: a model not yet built does not survive pickling to a Ray worker (pydantic's mock validator
    # recurses when unpickled), and it saved only about 15 ms of start-up
    model_config = ConfigDict(extra="forbid")

    replay: bool = Field(
        True, description=f'Use the checks stored in output.trace["{TRACE_KEY}"] when present (no model call).'
    )
    max_text_chars: int = Field(
        8000, ge=100, description="The response, the reference answer and each chunk are cut at this many characters."
    )


class ClaimOptions(_CommonOptions, JudgeOptions):
    """Options of the LLM claim metrics (``rc_*``): the judge model, the claim format, the batching.

    ``generator`` may be left out to replay stored checks only (a RAGChecker output file through the ``ragchecker``
    rag): no model is built or called, ``ragassay estimate`` counts no call, and an output without stored checks
    is unscored saying that a generator is needed to check it."""

    generator: GeneratorRef | None = Field(
        None,
        description="The judge model that extracts and checks claims: any generator, a name or { name, options }. "
        'Leave it out to replay the checks stored in output.trace["ragchecker"] only (no model call).',
    )
    prompt_version: Literal["ragassay-claims-1"] = Field(
        PROMPT_VERSION, description="Version of the extraction and checking prompts (part of the identity)."
    )
    claim_format: Literal["triplets", "sentences"] = Field(
        "triplets",
        description="'triplets': subject-predicate-object claims (RAGChecker's); 'sentences': short sentences.",
    )
    claims_per_call: int = Field(
        20, ge=1, le=200, description="Most claims checked in one call against one text (RAGChecker: 5)."
    )
    max_claims: int = Field(64, ge=1, le=500, description="Most claims one extraction may return (more is re-asked).")


class OfflineOptions(_CommonOptions):
    """Options of the offline claim metrics (``rc_*_offline``): the lexical checker's threshold."""

    threshold: float = Field(
        DEFAULT_LEXICAL_THRESHOLD,
        ge=0,
        le=1,
        description="Share of a claim's content words that must occur in the target text for Entailment.",
    )


class ClaimMetricOptions(ClaimOptions):
    """:class:`ClaimOptions` with the readings of the disputed definitions (not part of the shared checks)."""

    readings: Readings = Field(default_factory=Readings, description="Readings of the disputed definitions.")


class OfflineMetricOptions(OfflineOptions):
    """:class:`OfflineOptions` with the readings of the disputed definitions (not part of the shared checks)."""

    readings: Readings = Field(default_factory=Readings, description="Readings of the disputed definitions.")


class _ClaimMetric(Metric):
    """Shared plumbing: the shared claim run, the value by the spec's formula, the details."""

    spec: ClassVar[MetricSpec]
    offline: ClassVar[bool] = False

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        needs = self.spec.needs_with(getattr(self.options, "readings", None))
        self._shared().register(self.checks_key(), self.name, needs)

    @classmethod
    def required(cls, options: BaseModel) -> frozenset[str]:
        """The inputs of the check lists this metric reads with its ``readings`` (:func:`inputs_of`)."""
        return inputs_of(cls.spec.needs_with(getattr(options, "readings", None)), cls.offline)

    def _shared(self) -> SharedRuns:
        return self.context.shared(("ragassay.plugins.claims", "runs"), SharedRuns)

    def checks_key(self) -> Hashable:
        """What decides the claim run: the options but the metric's own ``readings``."""
        dumped = self.options.model_dump(mode="json", exclude={"readings"})
        return ("offline" if self.offline else "llm", json.dumps(dumped, sort_keys=True, default=str))

    def parts(self) -> set[str]:
        """The check lists the claim metrics of these options read (computed once for all of them)."""
        return self._shared().needs(self.checks_key()) or set(PARTS)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        raise NotImplementedError("a claim metric is asynchronous: use ascore")

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        run, owner = await self._shared().get(
            self.checks_key(), _output_key(sample, output), self.name, lambda: self._run(sample, output)
        )
        value, note = self.spec.value(run, getattr(self.options, "readings", None))
        details = self._details(run, owner)
        if value is None:
            return Unscored(reason=note or "undefined", details=details)
        if note:
            details["note"] = note
        return MetricResult(value=value, details=details)

    async def _run(self, sample: Sample, output: RAGOutput) -> ClaimRun:
        if self.options.replay and TRACE_KEY in output.trace:
            run = replayed(output.trace[TRACE_KEY])
            run.explanations["source"] = f'replayed from output.trace["{TRACE_KEY}"]'
            return run
        if not self.offline and self.options.generator is None:
            why = "replay only" if self.options.replay else "replay is off"
            reason = f'no checks stored in output.trace["{TRACE_KEY}"] ({why}) and no generator to check claims'
            return ClaimRun(chunk_ids=list(output.context_ids), missing=dict.fromkeys(PARTS, reason))
        texts = _texts(sample, output, self.options.max_text_chars)
        extract, check, per_call = self._judges(texts.question)
        run = await run_checks(texts, extract, check, per_call, self.parts())
        if self.offline:
            run.calls = 0  # no model behind the offline checker
        return run

    def _judges(self, question: str):
        offline = OfflineClaims(self.options.threshold)
        return offline.extract, offline.check, 10**6

    def judge_name(self) -> str:
        return f"offline lexical checker (threshold {self.options.threshold})"

    def _details(self, run: ClaimRun, owner: str | None) -> dict[str, Any]:
        details: dict[str, Any] = {
            "judge": self.judge_name(),
            "response_claims": _count(run.response_claims),
            "gt_answer_claims": _count(run.gt_answer_claims),
            "chunks": len(run.chunk_ids),
            "labels": {part: _tally(getattr(run, part)) for part in self.spec.needs},
        }
        if self.offline:
            details["offline"] = "weak: sentences as claims, word overlap as checker (docs/judges.md)"
        if owner is not None:
            details["checks_with"] = owner
        else:
            details.update(stored_checks(run))
        return details


class _LLMClaimMetric(LLMJudging, _ClaimMetric):
    """An ``rc_*`` metric: claims extracted and checked by the judge model."""

    Options = ClaimOptions

    def prompt_text(self) -> str:
        o = self.options
        shape = f"{o.claim_format} {o.claims_per_call} {o.max_claims} {o.max_text_chars}"
        return f"{shape}\n{EXTRACTION_PROMPT}\n{CHECKING_PROMPT}"

    def _judges(self, question: str):
        o = self.options

        async def extract(text: str):
            return await judging.extract_claims(self, text, question, form=o.claim_format, max_claims=o.max_claims)

        async def check(claims, target: str):
            return await judging.check_claims(self, claims, target, question)

        return extract, check, o.claims_per_call

    def judge_name(self) -> str:
        return self.identity if self.options.generator is not None else f"{self.name}: replay only (no generator)"

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """The claim run of these options is made once per output, by the first rc_* metric that declares them
        (the others: 0 calls). Extractions: the answer's and the reference's claims (those the metrics read);
        checks: ceil(claims / claims_per_call) per target (reference, answer, each retrieved chunk). The range
        runs from no claim (extractions only) to ``max_claims`` claims per text."""
        model, o, parts = self.judge_model(), self.options, self.parts()
        owners = self._shared().consumers.get(self.checks_key(), {})
        if owners and next(iter(owners)) != self.name:
            return asks(model, [])
        reference = sample.reference_answers[0][: o.max_text_chars] if sample.reference_answers else None
        answer = answer_text(hints)[: o.max_text_chars]
        texts = []
        if parts & {"answer2response", "retrieved2response"} and answer:
            texts.append(answer)
        if parts & {"response2answer", "retrieved2answer"} and reference is not None:
            texts.append(reference)
        values = {"format_rule": FORMAT_RULES[o.claim_format], "question": sample.question}
        asked = [fill(EXTRACTION_PROMPT, {**values, "text": t}) for t in texts]
        pattern = asks(model, asked, judging.extraction_model(o.claim_format, o.max_claims))
        per_ask = pattern.calls_high // max(1, pattern.calls_low)  # 1 + corrective re-asks
        batches = -(-o.max_claims // o.claims_per_call)
        targets = ("answer2response" in parts and reference is not None) + ("response2answer" in parts)
        if parts & {"retrieved2response", "retrieved2answer"}:
            targets += len(context_texts(sample, hints) or [])
        pattern.calls_high = (len(texts) + targets * batches) * per_ask
        pattern.note = "claim extraction; checks vary with the claims per text (up to max_claims)"
        return pattern


#: What each check list reads: the response's claims come from the answer, the reference's from the first reference
#: answer, and they are checked against the other one or the retrieved chunks.
PART_INPUTS: dict[str, frozenset[str]] = {
    "answer2response": frozenset({"answer", "reference_answers"}),
    "response2answer": frozenset({"answer", "reference_answers"}),
    "retrieved2response": frozenset({"answer", "contexts"}),
    "retrieved2answer": frozenset({"reference_answers", "contexts"}),
}


def inputs_of(parts: Iterable[str], offline: bool) -> frozenset[str]:
    """The inputs (:attr:`ragassay.Metric.requires`) of the check lists ``parts``; the LLM judge also reads the
    question (it extracts and checks claims in its light)."""
    found = frozenset().union(*(PART_INPUTS[part] for part in parts))
    return found if offline else found | {"question"}


def _texts(sample: Sample, output: RAGOutput, limit: int) -> Texts:
    reference = sample.reference_answers[0][:limit] if sample.reference_answers else None
    ids = list(output.context_ids) or [str(i) for i in range(len(output.contexts))]
    return Texts(sample.question, output.answer[:limit], reference, [c[:limit] for c in output.contexts], ids)


def _output_key(sample: Sample, output: RAGOutput) -> Hashable:
    shaped = [sample.question_id, output.answer, output.contexts, output.context_ids, output.trace.get(TRACE_KEY)]
    digest = hashlib.sha256(json.dumps(shaped, sort_keys=True, default=str).encode()).hexdigest()
    return digest, current_repeat()


def _count(claims: list[Any] | None) -> int | None:
    return None if claims is None else len(claims)


def _tally(labels: Any) -> dict[str, int] | None:
    if labels is None:
        return None
    flat = [x for row in labels for x in row] if labels and isinstance(labels[0], list) else list(labels)
    return {label: flat.count(label) for label in ("Entailment", "Neutral", "Contradiction")}


def _metric_class(spec: MetricSpec, offline: bool) -> type[_ClaimMetric]:
    base = _ClaimMetric if offline else _LLMClaimMetric
    options = OfflineMetricOptions if offline else ClaimMetricOptions
    name = f"rc_{spec.name}_offline" if offline else f"rc_{spec.name}"
    label = "; offline, weak" if offline else ""
    attributes = {
        "__doc__": f"{spec.title} (RAGChecker{label}): {spec.doc}",
        "__module__": __name__,
        "name": name,
        "spec": spec,
        "offline": offline,
        "Options": options,
        "formula": spec.formula,
        "source": spec.source,
        "direction": spec.direction,
        "value_range": (0.0, 1.0),
        "uses_answer": spec.uses_answer,
        "requires": inputs_of(spec.needs, offline),
    }
    return type(name, (base,), attributes)


SPECS_BY_NAME: dict[str, MetricSpec] = {}
METRICS: list[type[_ClaimMetric]] = []
for _spec in SPECS:
    for _offline in (False, True):
        _cls = _metric_class(_spec, _offline)
        SPECS_BY_NAME[_cls.name] = _spec
        METRICS.append(_cls)
