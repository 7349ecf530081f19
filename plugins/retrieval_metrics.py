"""Retrieval metrics over ids: context MRR and MAP (Unitxt context correctness), recall@k and precision@k.

The retrieved list is ``output.context_ids`` in rank order. A retrieved context is *relevant* when its chunk
id (``context_ids[i]``) or its document id (``context_document_ids[i]``, when given) is one of the sample's
``reference_context_ids``, so references may name documents or chunks.

Shared unscored rules (see docs/metrics.md):

* the sample has no ``reference_context_ids`` — nothing to compare with;
* ``output.retrieved is False`` — the system chose not to retrieve (an adaptive-retrieval decision, not a
  ranking; averaging it in as 0 would mix two questions);
* the output has context texts but no ``context_ids`` — the ranking cannot be matched.

An output that retrieved (``retrieved`` True or None) but returned an empty list scores 0.0.

All four have option ``compat="unitxt"`` (also set by ``[evaluation] compat``): then they compute exactly Unitxt
1.26's ``MRR``/``MAP`` and ``RetrievalAtK`` recall and precision: only ``context_ids`` are matched (not document
ids), as listed (a repeated id counts at each position), and the cases above score 0 instead of unscored.
trec_eval's ``recip_rank`` and ``map`` are the ``ir_metrics`` plugin's ``ir_mrr`` and ``ir_map``; docs/metrics.md
shows where the two definitions part.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, RAGOutput, Sample, Unscored, average_precision, hookimpl, reciprocal_rank
from ragassay.plugins.ir_metrics import CutOff
from ragassay.plugins.lexical_metrics import COMPAT_DESCRIPTION, Compat


class RankOptions(BaseModel):
    """Options of ``context_mrr`` and ``context_map``."""

    model_config = ConfigDict(extra="forbid")

    k: CutOff = Field(None, description="Consider only the first k retrieved contexts ('all' or None: all).")
    compat: Compat = Field("ragassay", description=COMPAT_DESCRIPTION)


class AtKOptions(BaseModel):
    """Options of ``recall_at_k`` and ``precision_at_k``."""

    model_config = ConfigDict(extra="forbid")

    k: CutOff = Field(5, description="Rank cut-off: the first k retrieved contexts ('all' or None: all).")
    compat: Compat = Field("ragassay", description=COMPAT_DESCRIPTION)


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


def _ranked_hits(sample: Sample, output: RAGOutput, options: RankOptions) -> list[bool] | Unscored:
    """Whether each of the first k retrieved contexts is relevant; in unitxt mode by ``context_ids`` alone."""
    if options.compat == "unitxt":
        relevant = set(sample.reference_context_ids)
        return [chunk_id in relevant for chunk_id in output.context_ids[: options.k]]
    refs = _references(sample, output)
    if isinstance(refs, Unscored):
        return refs
    return [bool(ids & set(refs)) for ids in _retrieved_ids(output, options.k)]


def unitxt_at_k(sample: Sample, output: RAGOutput, k: int | None) -> tuple[int, int, int]:
    """Unitxt ``RetrievalAtK`` counts: (relevant among the first min(k, n) ``context_ids``, min(k, n), distinct refs).

    As Unitxt 1.26 ``RetrievalMetric.compute``: the retrieved ids as listed (a repeated relevant id counts at each
    of its positions), the references de-duplicated, only ``context_ids`` matched.
    """
    refs = set(sample.reference_context_ids)
    ranked = output.context_ids[:k]
    return sum(chunk_id in refs for chunk_id in ranked), len(ranked), len(refs)


def _unitxt_range(options: BaseModel, default: tuple[float, float]) -> tuple[float, float | None]:
    """Unitxt's recall counts a repeated relevant id at each position, so it can exceed 1."""
    return (0.0, None) if options.compat == "unitxt" else default


class ContextMRR(Metric):
    """Context correctness (Unitxt): reciprocal rank of the first relevant retrieved context.

    Formula: 1 / rank of the first retrieved context (1-based, within the first k) whose chunk or document
    id is a reference id; 0 if there is none. Source: Unitxt RAG support, 'Context Correctness'
    (seeds/004), MRR (Unitxt ``MRR``); Voorhees 1999, TREC-8 Question Answering Track report (reciprocal rank).
    """

    uses_answer = False  # question, contexts and references only

    name = "context_mrr"
    requires = frozenset({"reference_context_ids", "context_ids"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = RankOptions
    formula = "1 / min{ i ≤ k : id_i ∈ refs or doc_id_i ∈ refs }  (0 if none)"
    source = "Unitxt RAG support, 'Context Correctness' (seeds/004); Voorhees 1999, TREC-8 QA track (MRR)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        hits = _ranked_hits(sample, output, self.options)
        if isinstance(hits, Unscored):
            return hits
        return reciprocal_rank(hits)


class ContextMAP(Metric):
    """Context correctness MAP (Unitxt): mean precision at the ranks of the relevant retrieved contexts.

    Formula: Σ_i rel_i · P@i / Σ_i rel_i over the first k retrieved contexts (0 when none is relevant), where
    rel_i says whether context i's chunk or document id is a reference id. The divisor is the number of relevant
    contexts *retrieved* (Unitxt ``MAP``); trec_eval's ``map`` (``ir_map``) divides by all reference ids, so a
    reference never retrieved lowers it. Source: Unitxt RAG support, 'Context Correctness' (seeds/004: "supplementing
    MRR by the Mean Average Precision (MAP) metric"); Unitxt ``MAP``.
    """

    uses_answer = False  # question, contexts and references only

    name = "context_map"
    requires = frozenset({"reference_context_ids", "context_ids"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = RankOptions
    formula = "Σ_i rel_i·P@i / Σ_i rel_i  over the first k retrieved  (0 if none relevant)"
    source = "Unitxt RAG support, 'Context Correctness' (seeds/004); Unitxt MAP"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        hits = _ranked_hits(sample, output, self.options)
        if isinstance(hits, Unscored):
            return hits
        return average_precision(hits)


class RecallAtK(Metric):
    """Recall@k: share of the distinct reference ids found among the first k retrieved contexts.

    Formula: |{r ∈ refs : r is the chunk or document id of one of the first k retrieved}| / |refs|.
    Source: Manning, Raghavan & Schütze 2008, Introduction to Information Retrieval, Section 8.4 (recall of
    the top k); Unitxt ``RetrievalAtK`` recall (counted here over distinct references, so it never
    exceeds 1 when several chunks of one reference document are retrieved).
    """

    uses_answer = False  # question, contexts and references only

    name = "recall_at_k"
    requires = frozenset({"reference_context_ids", "context_ids"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = AtKOptions
    formula = "|refs ∩ ids(first k retrieved)| / |refs|  (refs distinct; chunk or document ids)"
    source = "Manning et al. 2008, Introduction to IR, Sec. 8.4; Unitxt RetrievalAtK recall"

    def __init__(self, options: BaseModel | None = None, **kwargs):
        super().__init__(options, **kwargs)
        self.value_range = _unitxt_range(self.options, type(self).value_range)

    @classmethod
    def declared(cls, options: AtKOptions) -> tuple[str, tuple[float | None, float | None]]:
        return cls.direction, _unitxt_range(options, cls.value_range)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        if self.options.compat == "unitxt":  # Unitxt: relevant positions / distinct refs, 0 without refs
            hits, _, n_refs = unitxt_at_k(sample, output, self.options.k)
            return hits / n_refs if n_refs else 0.0
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
    Unitxt's ``RetrievalAtK`` divides by min(k, number retrieved) instead: ``compat="unitxt"`` does that, on
    ``context_ids`` only, 0 where ragassay is unscored.
    """

    uses_answer = False  # question, contexts and references only

    name = "precision_at_k"
    requires = frozenset({"reference_context_ids", "context_ids"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = AtKOptions
    formula = "|{ i ≤ k : id_i ∈ refs or doc_id_i ∈ refs }| / k  (k=None: / number retrieved)"
    source = "Manning et al. 2008, Introduction to IR, Sec. 8.4 (precision at k)"

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        if self.options.compat == "unitxt":  # Unitxt: divides by min(k, number retrieved)
            hits, ranked, _ = unitxt_at_k(sample, output, self.options.k)
            return hits / ranked if ranked else 0.0
        refs = _references(sample, output)
        if isinstance(refs, Unscored):
            return refs
        ranked = _retrieved_ids(output, self.options.k)
        relevant = sum(bool(ids & set(refs)) for ids in ranked)
        divisor = self.options.k if self.options.k is not None else len(ranked)
        return relevant / divisor if divisor else 0.0


@hookimpl
def register_metrics(register):
    for metric in (ContextMRR, ContextMAP, RecallAtK, PrecisionAtK):
        register(metric)
