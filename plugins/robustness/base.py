"""What every perturbation operator is: a pure function of one case (a sample, its retrieved chunks and a seeded
random generator) to an outcome (the perturbed chunks or question, and what a faithful answer must now say).

An operator is a class with a ``name``, an ``Options`` pydantic model (``extra="forbid"``, every field described),
a ``target`` (``"context"``: it changes the chunks between retrieval and generation; ``"question"``: it changes
the question before retrieval) and :meth:`Operator.apply`. :meth:`Operator.prepare` runs once with the corpus
chunks (distractors draw from them). Operators are registered with :func:`register_operator`; the ``perturbed``
rag finds them by name (``operator = { name = "distractors", options = { k = 3 } }``).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from ragassay import Chunk, ComponentContext, Sample

Target = Literal["context", "question"]


class NoOptions(BaseModel):
    """Options of an operator that takes none."""

    model_config = ConfigDict(extra="forbid")


@dataclasses.dataclass(frozen=True)
class Case:
    """One sample as an operator sees it: the question, the retrieved chunks (best first), and the generator of
    this (seed, sample, operator) (see :func:`ragassay.plugins.robustness.seeding.sample_rng`)."""

    sample: Sample
    chunks: tuple[Chunk, ...]
    rng: random.Random
    scores: tuple[float, ...] = ()

    def is_gold(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` is a reference context of the sample (by chunk id or document id)."""
        refs = set(self.sample.reference_context_ids)
        return chunk.id in refs or chunk.document_id in refs


@dataclasses.dataclass
class Outcome:
    """What an operator made of a case. ``chunks`` (context operators) or ``question`` (question operators) is the
    perturbed input; the other fields go to ``output.trace["perturbation"]`` (see the ``perturbed`` rag)."""

    changed: bool
    chunks: list[Chunk] | None = None
    question: str | None = None
    expected_answer: str | None = None
    original_answer: str | None = None
    canary: str | None = None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)


class Operator:
    """Base of the perturbation operators. Subclasses set ``name``, ``target``, ``Options`` and :meth:`apply`.

    :meth:`apply` must be pure: the same case (sample, chunks, generator state) gives the same outcome, and all
    randomness comes from ``case.rng``.
    """

    name: ClassVar[str] = ""
    target: ClassVar[Target] = "context"
    Options: ClassVar[type[BaseModel]] = NoOptions
    #: True when leaving a sample without context is the operator's purpose (``drop_gold``): the run does not warn
    #: about the outputs with no context it produces (``RAGSystem.empties_contexts``).
    empties_contexts: ClassVar[bool] = False

    def __init__(self, options: BaseModel | None = None):
        self.options = options if options is not None else self.Options()

    def prepare(self, chunks: Sequence[Chunk], context: ComponentContext) -> None:
        """Called once before :meth:`apply`, with the corpus chunks of the wrapped system. Default: nothing."""

    def apply(self, case: Case) -> Outcome:
        """The perturbed case."""
        raise NotImplementedError


#: Registered operators by name.
OPERATORS: dict[str, type[Operator]] = {}


def register_operator(cls: type[Operator]) -> type[Operator]:
    """Class decorator: make ``cls`` available to the ``perturbed`` rag under ``cls.name``."""
    if not cls.name or cls.name in OPERATORS:
        raise ValueError(f"operator {cls.__name__}: missing or duplicate name '{cls.name}'")
    OPERATORS[cls.name] = cls
    return cls


def gold_present(case: Case, chunks: Sequence[Chunk]) -> bool | None:
    """Whether a reference context is among ``chunks``; None when the sample names no reference context."""
    if not case.sample.reference_context_ids:
        return None
    return any(case.is_gold(c) for c in chunks)
