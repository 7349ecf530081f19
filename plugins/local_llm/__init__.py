"""The ``local`` generator and the model-based Unitxt metrics, all on this machine's CPU with transformers.

- ``local`` generator (:mod:`.generator`): a causal LM answering through the ``ragassay.llm`` chat interface.
- ``context_relevance_perplexity`` metric (:mod:`.relevance`, scoring in :mod:`.perplexity`): teacher-forced
  likelihood of the question given each retrieved context.
- ``answer_reward`` metric (:mod:`.reward`): a sequence-classification reward model on (question, answer).

They share the model loader (:mod:`.loader`: packaged GGUF, dequantised weights cached on disk; one loaded model
per file, dtype and kind in a process), the micro-batcher of the generator (:mod:`.batcher`) and the metrics'
batching helpers (:mod:`.inference`).
"""

from __future__ import annotations

from ragassay import hookimpl

from .generator import LocalBackend, LocalGenerator, LocalOptions
from .perplexity import PairScore, score_pairs, teacher_force
from .relevance import ContextRelevancePerplexity, PerplexityOptions
from .reward import AnswerReward, RewardOptions, RewardScore, score_answers

__all__ = [
    "AnswerReward",
    "ContextRelevancePerplexity",
    "LocalBackend",
    "LocalGenerator",
    "LocalOptions",
    "PairScore",
    "PerplexityOptions",
    "RewardOptions",
    "RewardScore",
    "score_answers",
    "score_pairs",
    "teacher_force",
]


@hookimpl
def register_generators(register):
    """Register the local generator."""
    register(LocalGenerator)


@hookimpl
def register_metrics(register):
    """Register the model-based metrics: context_relevance_perplexity and answer_reward."""
    register(ContextRelevancePerplexity)
    register(AnswerReward)
