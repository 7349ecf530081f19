"""The inputs a metric or judge can declare it needs (``Metric.requires``, ``Judge.requires``).

Each name is a part of the data model (:mod:`ragassay.models`) that a component reads to give a value:

* the **sample's** inputs (:class:`~ragassay.models.Sample`), known before any call: ``ragassay run``,
  :func:`ragassay.run`, ``gate`` and ``estimate`` count them while the dataset is read and refuse a listed metric
  or judge that no sample can feed (see :mod:`ragassay.engine.requirements`);
* the **output's** inputs (:class:`~ragassay.models.RAGOutput`), known only once a system has answered: declared
  for the reader, not checked before the run;
* the values of **other metrics** of the same output (a derived metric).

A component that declares nothing (the default, an empty set) is not checked: third-party components written
before ``requires`` existed keep working. Declare what the value cannot do without (it is unscored, or means
nothing, when the input is missing); an input read only when it is there (extra details) is not a requirement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, Literal

Side = Literal["sample", "output", "metrics"]


def _text(values: Iterable[Any]) -> bool:
    """Whether some value is a non-blank string."""
    return any(isinstance(v, str) and v.strip() for v in values)


def _qrels(sample: Any) -> bool:
    return _text(sample.reference_context_ids) or bool((sample.metadata or {}).get("relevance"))


@dataclasses.dataclass(frozen=True)
class Input:
    """One name of the vocabulary: where it lives, what it is, and (for a sample's input) when a sample has it."""

    name: str
    side: Side
    description: str
    #: For an input of the sample that can be missing: whether ``sample`` has it. None: not checked before the run
    #: (an output's input, another metric's value, or a field every sample has).
    present: Callable[[Any], bool] | None = None


INPUTS: dict[str, Input] = {
    i.name: i
    for i in (
        Input("question", "sample", "Sample.question: the user's question (every sample has one)."),
        Input(
            "reference_answers",
            "sample",
            "Sample.reference_answers: the ground-truth answers (a sample has them when one is not blank).",
            lambda s: _text(s.reference_answers),
        ),
        Input(
            "reference_contexts",
            "sample",
            "Sample.reference_contexts: the gold context texts (e.g. the article a truthfulness evaluator reads).",
            lambda s: _text(s.reference_contexts),
        ),
        Input(
            "reference_context_ids",
            "sample",
            "Sample.reference_context_ids: ids of the gold documents or chunks (the retrieval metrics' relevant ids).",
            lambda s: _text(s.reference_context_ids),
        ),
        Input(
            "qrels",
            "sample",
            "Relevance judgements of ids: Sample.reference_context_ids, or graded ones in metadata['relevance'] "
            "(the IR metrics read either).",
            _qrels,
        ),
        Input(
            "group_id",
            "sample",
            "Sample.group_id: the semantic group (same query logic) of GRAMMAR-style datasets.",
            lambda s: isinstance(s.group_id, str) and bool(s.group_id.strip()),
        ),
        Input("answer", "output", "RAGOutput.answer: the generated answer."),
        Input(
            "contexts", "output", "RAGOutput.contexts: the texts of the retrieved contexts (and RAGOutput.retrieved)."
        ),
        Input("context_ids", "output", "RAGOutput.context_ids: the ids of the retrieved contexts, in rank order."),
        Input("context_document_ids", "output", "RAGOutput.context_document_ids: the document of each context."),
        Input("trace", "output", "RAGOutput.trace: what the system recorded (e.g. a perturbation, checks replayed)."),
        Input("metric_values", "metrics", "The values of other metrics of the same output (a derived metric)."),
    )
}


def unknown_inputs(names: Iterable[str]) -> list[str]:
    """The names that are not in :data:`INPUTS`, sorted."""
    return sorted(name for name in names if name not in INPUTS)


def checked_inputs(names: Iterable[str]) -> list[str]:
    """The names among ``names`` that a sample may lack, so the dataset is checked for them (in vocabulary order)."""
    wanted = set(names)
    return [name for name, i in INPUTS.items() if name in wanted and i.present is not None]
