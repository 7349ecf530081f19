"""Retrieval metrics over ids: context MRR (Unitxt context correctness), recall@k and precision@k.

The retrieved list is ``output.context_ids`` in rank order. A retrieved context is *relevant* when its chunk
id (``context_ids[i]``) or its document id (``context_document_ids[i]``, when given) is one of the sample's
``reference_context_ids``, so references may name documents or chunks.

Shared unscored rules (see docs/metrics.md):

* the sample has no ``reference_context_ids`` — nothing to compare with;
* ``output.retrieved is False`` — the system chose not to retrieve (an adaptive-retrieval decision, not a
  ranking; averaging it in as 0 would mix two questions);
* the output has context texts but no ``context_ids`` — the ranking cannot be matched.

An output that retrieved (``retrieved`` True or None) but returned an empty list scores 0.0.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, RAGOutput, Sample, Unscored, hookimpl
from ragassay.plugins.ir_metrics import CutOff


class MRROptions(BaseModel):
    """Options of ``context_mrr``."""

    model_config = ConfigDict(extra="forbid")

    k: CutOff = Field(None, description="Consider only the first k retrieved contexts ('all' or None: all).")


class AtKOptions(BaseModel):
    """Options of ``recall_at_k`` and ``precision_at_k``."""

    model_config = ConfigDict(extra="forbid")

    k: CutOff = Field(5, description="Rank cut-off: the first k retrieved contexts ('all' or None: all).")


def _references(sample: Sample, output: RAGOutput) -> list[str] | Unscored:
    """Distinct reference ids, or why the retrieval of this output cannot be scored."""
    refs = list(dict.fromkeys(ref for ref in sample.reference_context_ids if ref))
    if not refs:
        return Unscored(reason="sample has no reference_context_ids")
    if output.retrieved is False:
        return Unscored(reason="system did not retrieve (retrieved=False)")
    if output.contexts and not output.context_ids:
        return Unscored(reason="output has contexts but no context_ids to match against references")
    return refs


def _retrieved_ids(output: RAGOutput, k: int | None) -> list[set[str]]:
    """For each of the first k retrieved contexts: its chunk id and, when given, its document id."""
    doc_ids = output.context_document_ids
    ranked = []
    for i, chunk_id in enumerate(output.context_ids[:k]):
        ranked.append({chunk_id, doc_ids[i]} if i < len(doc_ids) else {chunk_id})
    return ranked


class ContextMRR(Metric):
    """Context correctness (Unitxt): reciprocal rank of the first relevant retrieved context.

    Formula: 1 / rank of the first retrieved context (1-based, within the first k) whose chunk or document
    id is a reference id; 0 if there is none. Source: Unitxt RAG support, 'Context Correctness'
    (seeds/004), MRR; Voorhees 1999, TREC-8 Question Answering Track report (reciprocal rank).
    """

    name = "context_mrr"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = MRROptions
    formula = "1 / min{ i ≤ k : id_i ∈ refs or doc_id_i ∈ refs }  (0 if none)"
    source = "Unitxt RAG support, 'Context Correctness' (seeds/004); Voorhees 1999, TREC-8 QA track (MRR)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = _references(sample, output)
        if isinstance(refs, Unscored):
            return refs
        for rank, ids in enumerate(_retrieved_ids(output, self.options.k), start=1):
            if ids & set(refs):
                return 1.0 / rank
        return 0.0


class RecallAtK(Metric):
    """Recall@k: share of the distinct reference ids found among the first k retrieved contexts.

    Formula: |{r ∈ refs : r is the chunk or document id of one of the first k retrieved}| / |refs|.
    Source: Manning, Raghavan & Schütze 2008, Introduction to Information Retrieval, Section 8.4 (recall of
    the top k); Unitxt ``RetrievalAtK`` recall (counted here over distinct references, so it never
    exceeds 1 when several chunks of one reference document are retrieved).
    """

    name = "recall_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = AtKOptions
    formula = "|refs ∩ ids(first k retrieved)| / |refs|  (refs distinct; chunk or document ids)"
    source = "Manning et al. 2008, Introduction to IR, Sec. 8.4; Unitxt RetrievalAtK recall"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = _references(sample, output)
        if isinstance(refs, Unscored):
            return refs
        seen = set().union(*_retrieved_ids(output, self.options.k))
        return sum(ref in seen for ref in refs) / len(refs)


class PrecisionAtK(Metric):
    """Precision@k: share of the first k ranks that hold a relevant retrieved context.

    Formula: |{i ≤ k : id_i ∈ refs or doc_id_i ∈ refs}| / k; the divisor is k even when fewer than k
    contexts were retrieved (standard IR definition); with k=None it is the number retrieved (0.0 when
    none). Source: Manning, Raghavan & Schütze 2008, Introduction to Information Retrieval, Section 8.4.
    Unitxt's ``RetrievalAtK`` divides by min(k, number retrieved) instead.
    """

    name = "precision_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = AtKOptions
    formula = "|{ i ≤ k : id_i ∈ refs or doc_id_i ∈ refs }| / k  (k=None: / number retrieved)"
    source = "Manning et al. 2008, Introduction to IR, Sec. 8.4 (precision at k)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        refs = _references(sample, output)
        if isinstance(refs, Unscored):
            return refs
        ranked = _retrieved_ids(output, self.options.k)
        relevant = sum(bool(ids & set(refs)) for ids in ranked)
        divisor = self.options.k if self.options.k is not None else len(ranked)
        return relevant / divisor if divisor else 0.0


@hookimpl
def register_metrics(register):
    for metric in (ContextMRR, RecallAtK, PrecisionAtK):
        register(metric)
