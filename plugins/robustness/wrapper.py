"""The ``perturbed`` rag: another system of the run with a seeded perturbation of its retrieved chunks or question.

Configure one per operator and strength, or a grid over them::

    [systems.base]
    retriever = "bm25"
    generator = "extractive"

    [systems.noisy]
    rag = "perturbed"
    options = { system = "base", operator = { name = "distractors", options = { k = 3 } }, seed = 0 }

A context operator runs between the wrapped system's retrieval and its generation: the wrapped rag must implement
:meth:`ragassay.RAGSystem.retrieve_step` and :meth:`ragassay.RAGSystem.answer_from` (``naive`` and ``retrieval``
do; another rag is a configuration error). A question operator changes the question and calls the wrapped
system's ``answer``, so it wraps any rag. The wrapped system's retrieval of each question is computed once per
process and shared by all its wrappers (see :mod:`.sharing`).

Every output carries ``trace["perturbation"]``: ``operator``, ``options`` (validated, defaults filled), ``seed``,
``base`` (the wrapped system: the unperturbed twin), ``target`` (``"context"`` | ``"question"``),
``gold_present`` (a reference context among the chunks given to the generator; None when the sample names none),
``expected_answer`` and ``original_answer`` (counterfactual), ``canary`` (injection), ``changed`` (whether the
operator changed anything for this sample) and ``details`` (what the operator did).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragassay import Chunk, ConfigError, Corpus, RAGOutput, RAGSystem, Retrieved, Sample

from .base import Case, Outcome, gold_present
from .operators import operator_class
from .seeding import sample_rng
from .sharing import SharedRetrieval


class OperatorSpec(BaseModel):
    """An operator by name with its options; the options are validated (and defaults filled) by the operator."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Operator name (see the operators of ragassay.plugins.robustness).")
    options: dict[str, Any] = Field(default_factory=dict, description="Options of the operator.")

    @model_validator(mode="after")
    def _validate_options(self) -> OperatorSpec:
        try:
            cls = operator_class(self.name)
            self.options = cls.Options.model_validate(self.options).model_dump(mode="json")
        except (ConfigError, ValidationError) as exc:
            raise ValueError(str(exc)) from None
        return self


class PerturbedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(description="The system of the run that is perturbed (its unperturbed twin).")
    operator: OperatorSpec = Field(description="The perturbation: { name, options }.")
    seed: int = Field(0, description="Seed of the operator's random choices (with each sample's question_id).")


class PerturbedRAG(RAGSystem):
    """Another system of the run, with a seeded perturbation of its retrieved chunks or of its question."""

    name = "perturbed"
    wraps = "system"
    Options = PerturbedOptions

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        spec = self.options.operator
        cls = operator_class(spec.name)
        self.operator = cls(cls.Options.model_validate(spec.options))
        self.empties_contexts = cls.empties_contexts

    @classmethod
    def check_wrapped(cls, wrapped: type[RAGSystem], options: BaseModel) -> None:
        operator = operator_class(options.operator.name)
        if not wrapped.answers:
            raise ConfigError(
                f"the wrapped rag '{wrapped.name}' gives no answer (retrieval-only), and a perturbation is measured by "
                "how the answers change: wrap a system that answers (e.g. naive with the same retriever)"
            )
        if operator.target == "context" and not wrapped.has_steps():
            raise ConfigError(
                f"operator '{operator.name}' changes the retrieved chunks, so the wrapped rag '{wrapped.name}' must "
                "implement retrieve_step and answer_from (naive and retrieval do); question operators wrap any rag"
            )

    def prepare(self, corpus: Corpus) -> None:
        self.prepare_wrapped(corpus)
        inner = self.wrapped_system()
        chunker = inner.parts.get("chunker")
        chunks = corpus.chunks(chunker) if chunker is not None else _document_chunks(corpus)
        self.operator.prepare(chunks, self.context)
        self.share = self.context.shared(("perturbed retrieval", id(inner)), SharedRetrieval)
        self.share.register()

    async def answer(self, sample: Sample) -> RAGOutput:
        inner, spec = self.wrapped_system(), self.options.operator
        rng = sample_rng(self.options.seed, sample.question_id, spec.name)
        if self.operator.target == "question":
            outcome = self.operator.apply(Case(sample, (), rng))
            output = await inner.answer(sample.model_copy(update={"question": outcome.question or sample.question}))
            refs = set(sample.reference_context_ids)
            shown = set(output.context_ids) | set(output.context_document_ids)
            gold = bool(refs & shown) if refs and output.retrieved else None
        else:
            retrieved = await self.share.get(sample, inner.retrieve_step)
            case = Case(sample, tuple(retrieved.chunks), rng, tuple(retrieved.scores))
            outcome = self.operator.apply(case)
            chunks = outcome.chunks if outcome.chunks is not None else list(retrieved.chunks)
            trace = {**retrieved.trace, "unperturbed_ids": [c.id for c in retrieved.chunks]}
            output = await inner.answer_from(sample, Retrieved(chunks, _scores(retrieved, chunks), trace))
            gold = gold_present(case, chunks)
        output.trace["perturbation"] = self._record(outcome, gold)
        return output

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """The wrapped system's calls (a perturbation changes the prompt's text, not the number of calls)."""
        return self.wrapped_system().call_pattern(sample, hints)

    def _record(self, outcome: Outcome, gold: bool | None) -> dict[str, Any]:
        spec = self.options.operator
        return {
            "operator": spec.name,
            "options": dict(spec.options),
            "seed": self.options.seed,
            "base": self.options.system,
            "target": self.operator.target,
            "gold_present": gold,
            "expected_answer": outcome.expected_answer,
            "original_answer": outcome.original_answer,
            "canary": outcome.canary,
            "changed": outcome.changed,
            "details": outcome.details,
        }

    async def aclose(self) -> None:
        """Close the shared wrapped system once (by the first of its wrappers closed, after the run's work)."""
        await self.close_wrapped()


def _scores(retrieved: Retrieved, chunks: list[Chunk]) -> list[float]:
    """The retriever's scores of the chunks, in their new order; none when a chunk was not retrieved."""
    by_id = dict(zip((c.id for c in retrieved.chunks), retrieved.scores))
    scores = [by_id.get(c.id) for c in chunks]
    return [] if None in scores or len(by_id) != len(retrieved.chunks) else scores


def _document_chunks(corpus: Corpus) -> list[Chunk]:
    """The corpus documents as chunks, for a wrapped system that has no chunker."""
    return [Chunk(id=d.id, document_id=d.id, text=d.text) for d in corpus.documents]
