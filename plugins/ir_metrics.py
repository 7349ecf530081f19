"""IR metrics over document or chunk ids with trec_eval semantics: MRR, MAP, nDCG@k, P@k, recall@k, hit@k, R-prec.

Two layers:

* pure functions that compute trec_eval's measures from qrels ``{qid: {docid: grade}}`` and a run
  ``{qid: [(docid, score), ...]}`` (:func:`evaluate`, :func:`read_qrels`, :func:`read_run`), checked against
  trec_eval's own test collection;
* ragassay metrics (``ir_mrr``, ``ir_map``, ``ndcg_at_k``, ``ir_precision_at_k``, ``ir_recall_at_k``,
  ``hit_at_k``, ``r_precision``) that score one output: the sample's ``reference_context_ids`` are the
  relevant ids (grade 1; graded from ``sample.metadata["relevance"]``), the output's ranking is the run.

trec_eval semantics (``form_res_rels.c``, ``m_*.c`` of usnistgov/trec_eval): a run is ordered by score
descending, ties by document id descending; a document is relevant when its grade is at least the relevance
level (1; ``-l``); negative grades mean "in the pool but unjudged" (gain 0, never relevant); a duplicate
document in one query's run is an error. AP divides by every relevant document of the query. Queries of
the run without qrels are ignored; queries of the qrels missing from the run are not counted unless
``complete=True`` (trec_eval ``-c``), which counts them with every measure 0.
"""

from __future__ import annotations

import dataclasses
import math
import operator
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ragassay import Metric, RAGOutput, Sample, Unscored, hookimpl

Qrels = Mapping[str, Mapping[str, float]]
Run = Mapping[str, Sequence[tuple[str, float]]]

#: trec_eval's default cut-offs for P, recall, ndcg_cut, map_cut and success (success: 1, 5, 10).
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
SUCCESS_CUTOFFS = (1, 5, 10)
#: trec_eval's floor for geometric means (``MIN_GEO_MEAN``).
MIN_GEO_MEAN = 0.00001


# ----------------------------------------------------------------------------------------------
# Files and ordering
# ----------------------------------------------------------------------------------------------


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``qid iter docid rel`` per line) into ``{qid: {docid: rel}}``."""
    qrels: dict[str, dict[str, int]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 4:
            raise ValueError(f"{path}:{number}: a qrels line has 4 fields (qid iter docid rel), got {line!r}")
        qrels.setdefault(fields[0], {})[fields[2]] = int(fields[3])
    return qrels


def read_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """Read a TREC run file (``qid Q0 docid rank score tag``) into ``{qid: [(docid, score), ...]}``.

    The rank column is ignored, as trec_eval does: only the score orders a query's documents.
    """
    run: dict[str, list[tuple[str, float]]] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 6:
            raise ValueError(f"{path}:{number}: a run line has 6 fields (qid Q0 docid rank score tag), got {line!r}")
        run.setdefault(fields[0], []).append((fields[2], float(fields[4])))
    return run


def trec_order(results: Iterable[tuple[str, float]]) -> list[str]:
    """Document ids by score descending, ties by document id descending (trec_eval ``comp_sim_docno``).

    Raises ValueError on a duplicate document, as trec_eval does.
    """
    ordered = sorted(results, key=operator.itemgetter(1, 0), reverse=True)
    ids = [docid for docid, _ in ordered]
    if len(set(ids)) != len(ids):
        duplicate = next(docid for docid in ids if ids.count(docid) > 1)
        raise ValueError(f"duplicate document {duplicate!r} in one query's results")
    return ids


# ----------------------------------------------------------------------------------------------
# One query
# ----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Judged:
    """One query's ranking matched against its judgements.

    ``grades``: the grade of each retrieved document in rank order, -1 when it is not judged (absent, or a
    negative grade: trec_eval's "in the pool but unjudged"); ``judged``: the grades (>= 0) of every judged
    document of the query; ``level``: the relevance level.
    """

    grades: tuple[float, ...]
    judged: tuple[float, ...]
    level: float = 1

    @classmethod
    def of(cls, ranking: Sequence[str], judgements: Mapping[str, float], level: float = 1) -> Judged:
        """Match a ranked list of ids against ``{id: grade}``."""
        grades = tuple(max(float(judgements.get(docid, -1)), -1.0) for docid in ranking)
        judged = tuple(float(g) for g in judgements.values() if g >= 0)
        return cls(grades, judged, level)

    @property
    def num_rel(self) -> int:
        """Relevant documents in the judgements (grade >= level)."""
        return sum(g >= 0 and g >= self.level for g in self.judged)

    def relevant(self, k: int | None = None) -> list[bool]:
        """Whether each of the first k retrieved documents is relevant."""
        return [g >= 0 and g >= self.level for g in self.grades[:k]]


def average_precision(q: Judged, k: int | None = None, *, over_hits: bool = False) -> float:
    """AP (trec_eval ``map``; ``map_cut_k`` with k): sum of precision at each relevant retrieved rank
    divided by the number of relevant documents; ``over_hits`` divides by relevant *retrieved* (Unitxt)."""
    hits, total = 0, 0.0
    for rank, rel in enumerate(q.relevant(k), start=1):
        if rel:
            hits += 1
            total += hits / rank
    divisor = hits if over_hits else q.num_rel
    return total / divisor if hits and divisor else 0.0


def reciprocal_rank(q: Judged, k: int | None = None) -> float:
    """1 / rank of the first relevant document (trec_eval ``recip_rank``); 0 if none."""
    return next((1.0 / rank for rank, rel in enumerate(q.relevant(k), start=1) if rel), 0.0)


def precision(q: Judged, k: int | None, *, capped: bool = False) -> float:
    """Relevant among the first k / k (trec_eval ``P_k``); ``capped`` divides by min(k, retrieved) (Unitxt);
    k None divides by the number retrieved."""
    divisor = len(q.grades) if k is None else min(k, len(q.grades)) if capped else k
    return sum(q.relevant(k)) / divisor if divisor else 0.0


def recall(q: Judged, k: int | None = None) -> float:
    """Relevant among the first k / relevant documents (trec_eval ``recall_k``); 0 when none is relevant."""
    return sum(q.relevant(k)) / q.num_rel if q.num_rel else 0.0


def success(q: Judged, k: int | None) -> float:
    """1 if a relevant document is among the first k (trec_eval ``success_k``), else 0."""
    return 1.0 if any(q.relevant(k)) else 0.0


def r_precision(q: Judged) -> float:
    """Precision at rank R, R = number of relevant documents (trec_eval ``Rprec``)."""
    return sum(q.relevant(q.num_rel)) / q.num_rel if q.num_rel else 0.0


def ndcg(q: Judged, k: int | None = None) -> float:
    """nDCG (trec_eval ``ndcg``; ``ndcg_cut_k`` with k): gain = grade, discount log2(rank + 1), ideal
    ranking = every judged document by grade descending, both cut at k; 0 when the ideal DCG is 0."""
    ideal = sorted((g for g in q.judged if g > 0), reverse=True)[:k]
    ideal_dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(q.grades[:k]) if g > 0)
    return dcg / ideal_dcg if ideal_dcg > 0 else 0.0


def query_measures(q: Judged, cutoffs: Sequence[int] = CUTOFFS) -> dict[str, float]:
    """Every implemented trec_eval measure of one query, under trec_eval's names."""
    values: dict[str, float] = {
        "num_ret": len(q.grades),
        "num_rel": q.num_rel,
        "num_rel_ret": sum(q.relevant()),
        "map": average_precision(q),
        "Rprec": r_precision(q),
        "recip_rank": reciprocal_rank(q),
        "ndcg": ndcg(q),
    }
    for k in cutoffs:
        values[f"P_{k}"] = precision(q, k)
        values[f"recall_{k}"] = recall(q, k)
        values[f"ndcg_cut_{k}"] = ndcg(q, k)
        values[f"map_cut_{k}"] = average_precision(q, k)
    for k in SUCCESS_CUTOFFS:
        values[f"success_{k}"] = success(q, k)
    return values


# ----------------------------------------------------------------------------------------------
# A whole run
# ----------------------------------------------------------------------------------------------


def evaluate(
    qrels: Qrels, run: Run, *, relevance_level: float = 1, complete: bool = False, cutoffs: Sequence[int] = CUTOFFS
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """trec_eval over a run: (per-query measures, summary "all" line).

    Queries of ``run`` without qrels are skipped; with ``complete`` (``-c``) the qrels queries missing from
    the run count with every measure 0. The summary is the mean over evaluated queries, except
    ``num_q`` (their number), ``num_ret``/``num_rel``/``num_rel_ret`` (sums) and ``gm_map`` (geometric mean
    of AP floored at 0.00001).
    """
    per_query: dict[str, dict[str, float]] = {}
    for qid in sorted(run):
        if qid in qrels:
            per_query[qid] = query_measures(Judged.of(trec_order(run[qid]), qrels[qid], relevance_level), cutoffs)
    missing = (
        {
            qid: query_measures(Judged.of([], qrels[qid], relevance_level), cutoffs)
            for qid in sorted(qrels)
            if qid not in per_query
        }
        if complete
        else {}
    )
    return per_query, summarize([*per_query.values(), *missing.values()])


def summarize(queries: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """trec_eval's "all" line from per-query measures."""
    if not queries:
        return {"num_q": 0}
    summary: dict[str, float] = {"num_q": len(queries)}
    for name in queries[0]:
        values = [q[name] for q in queries]
        summary[name] = sum(values) if name.startswith("num_") else sum(values) / len(values)
    summary["gm_map"] = math.exp(sum(math.log(max(q["map"], MIN_GEO_MEAN)) for q in queries) / len(queries))
    return summary


# ----------------------------------------------------------------------------------------------
# ragassay metrics
# ----------------------------------------------------------------------------------------------


def _all_is_none(value: Any) -> Any:
    """``"all"`` (TOML has no null) means no cut-off."""
    return None if isinstance(value, str) and value.strip().lower() == "all" else value


#: A rank cut-off option: a positive integer, or ``"all"`` / None for the whole ranking.
CutOff = Annotated[Annotated[int, Field(ge=1)] | None, BeforeValidator(_all_is_none)]


class IROptions(BaseModel):
    """Options shared by the IR metrics."""

    model_config = ConfigDict(extra="forbid")

    level: Literal["auto", "chunk", "document"] = Field(
        "auto",
        description="Rank chunk ids ('chunk') or document ids, first occurrence kept ('document'); "
        "'auto': document ids when the output gives them and no reference is a retrieved chunk id.",
    )
    relevance_level: float = Field(1, description="Minimum grade of a relevant id (trec_eval -l).")
    order: Literal["scores", "ranks"] = Field(
        "scores",
        description="'scores': re-order by output.trace['scores'] when present, ties by id "
        "descending (trec_eval); 'ranks': the output's order as is.",
    )


IRVariant = Literal["trec_eval", "unitxt"]
UNITXT_VARIANT = (
    "'unitxt': Unitxt 1.26's definition; the ids as the output lists them (not re-sorted, repeats kept) and 0 "
    "instead of unscored without references or retrieval ([evaluation] compat = 'unitxt' sets it)."
)


class MRROptions(IROptions):
    """Options of ``ir_mrr``."""

    k: CutOff = Field(None, description="Consider the first k ids only ('all' or None: all, as trec_eval).")
    variant: IRVariant = Field("trec_eval", description="'trec_eval': recip_rank. " + UNITXT_VARIANT)


class MAPOptions(IROptions):
    """Options of ``ir_map``."""

    k: CutOff = Field(None, description="Cut-off (trec_eval map_cut_k); 'all' or None: whole ranking.")
    variant: IRVariant = Field(
        "trec_eval",
        description="'trec_eval': divide by all relevant ids. " + UNITXT_VARIANT + " Divides by relevant retrieved.",
    )


class CutOptions(IROptions):
    """Options of ``ir_recall_at_k`` and ``hit_at_k``."""

    k: CutOff = Field(5, description="Rank cut-off; 'all' or None: the whole ranking.")
    variant: IRVariant = Field(
        "trec_eval", description="'trec_eval': recall_k / success_k. " + UNITXT_VARIANT + " (RetrievalAtK)"
    )


class PrecisionOptions(CutOptions):
    """Options of ``ir_precision_at_k``."""

    variant: IRVariant = Field(
        "trec_eval",
        description="'trec_eval': divide by k. " + UNITXT_VARIANT + " Divides by min(k, number retrieved). With k = "
        "'all' both divide by the number retrieved.",
    )


class NDCGOptions(IROptions):
    """Options of ``ndcg_at_k``."""

    k: CutOff = Field(10, description="Rank cut-off (trec_eval ndcg_cut_k); 'all' or None: full ndcg.")


def sample_qrels(sample: Sample) -> dict[str, float] | Unscored:
    """The sample's judgements: each reference id with grade 1, updated by ``metadata['relevance']``."""
    qrels = {ref: 1.0 for ref in sample.reference_context_ids if ref}
    graded = sample.metadata.get("relevance") or {}
    if not isinstance(graded, Mapping) or not all(isinstance(g, (int, float)) for g in graded.values()):
        return Unscored(reason="sample.metadata['relevance'] must map ids to numeric grades")
    qrels.update({str(docid): float(grade) for docid, grade in graded.items()})
    return qrels


def output_ranking(output: RAGOutput, qrels: Mapping[str, float], opts: IROptions) -> list[str]:
    """The output's retrieved ids at the configured level, in trec_eval order (Unitxt variant: as listed)."""
    ranked = _level_ids(output, qrels, opts)
    if getattr(opts, "variant", "trec_eval") == "unitxt":
        return ranked
    scores = output.trace.get("scores") if opts.order == "scores" else None
    if isinstance(scores, list) and len(scores) == len(ranked) and all(isinstance(s, (int, float)) for s in scores):
        pairs = list(zip(ranked, scores))
    else:
        pairs = [(docid, -rank) for rank, docid in enumerate(ranked)]
    first: dict[str, float] = {}
    for docid, score in pairs:  # keep the best-ranked occurrence of each id
        first.setdefault(docid, score)
    return trec_order(first.items())


#: Judged rankings kept for reuse by the other IR metrics of the same output (see :func:`judged`).
JUDGED_CACHE_SIZE = 256
_JUDGED: OrderedDict[tuple, Judged] = OrderedDict()
_JUDGED_LOCK = threading.Lock()


def judged(output: RAGOutput, qrels: Mapping[str, float], opts: IROptions) -> Judged:
    """:func:`output_ranking` matched against ``qrels`` (:meth:`Judged.of`).

    The IR metrics of one output usually read the same ranking with the same options: it is computed once and
    kept (the last :data:`JUDGED_CACHE_SIZE`), keyed by everything it depends on (ids, document ids, scores,
    judgements and the options that change it), so a value never depends on what was scored before it.
    """
    scores = output.trace.get("scores")
    key = (
        tuple(output.context_ids),
        tuple(output.context_document_ids),
        tuple(scores) if isinstance(scores, list) else repr(scores),
        tuple(qrels.items()),
        opts.level,
        opts.order,
        opts.relevance_level,
        getattr(opts, "variant", "trec_eval"),
    )
    try:
        with _JUDGED_LOCK:
            found = _JUDGED.get(key)
            if found is not None:
                _JUDGED.move_to_end(key)
                return found
    except TypeError:  # an unhashable value among the scores: not kept
        return Judged.of(output_ranking(output, qrels, opts), qrels, opts.relevance_level)
    result = Judged.of(output_ranking(output, qrels, opts), qrels, opts.relevance_level)
    with _JUDGED_LOCK:
        _JUDGED[key] = result
        while len(_JUDGED) > JUDGED_CACHE_SIZE:
            _JUDGED.popitem(last=False)
    return result


def _level_ids(output: RAGOutput, qrels: Mapping[str, float], opts: IROptions) -> list[str]:
    """The retrieved chunk ids or document ids (``level``), in the output's order."""
    ids, doc_ids = list(output.context_ids), list(output.context_document_ids)
    level = opts.level
    if level == "auto":
        level = "document" if doc_ids and not any(i in qrels for i in ids) else "chunk"
    return doc_ids if level == "document" and doc_ids else ids


class IRMetric(Metric):
    """Base of the IR metrics: builds the query's :class:`Judged` and applies :meth:`measure`."""

    uses_answer = False  # question, contexts and references only
    requires = frozenset({"qrels", "context_ids"})

    Options = IROptions

    @classmethod
    def required(cls, options: IROptions) -> frozenset[str]:
        """With ``level = "document"`` the ranking is the output's document ids."""
        return cls.requires | ({"context_document_ids"} if options.level == "document" else set())

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        qrels = sample_qrels(sample)
        if isinstance(qrels, Unscored):
            return qrels
        missing = _missing(qrels, output)
        if missing is not None:  # Unitxt scores these 0 (its prediction is an empty list or has no hit)
            return 0.0 if getattr(self.options, "variant", "trec_eval") == "unitxt" else Unscored(reason=missing)
        if self.options.level == "document" and output.context_ids and not output.context_document_ids:
            return Unscored(reason="level='document' but the output has no context_document_ids")
        return self.measure(judged(output, qrels, self.options))

    def measure(self, q: Judged) -> float:
        raise NotImplementedError


def _missing(qrels: Mapping[str, float], output: RAGOutput) -> str | None:
    """Why the ranking cannot be judged (no references, no retrieval, contexts without ids), or None."""
    if not qrels:
        return "sample has no reference_context_ids"
    if output.retrieved is False:
        return "system did not retrieve (retrieved=False)"
    if output.contexts and not output.context_ids:
        return "output has contexts but no context_ids to match against references"
    return None


class IRMRR(IRMetric):
    """Reciprocal rank of the first relevant id (trec_eval recip_rank); the run mean is MRR."""

    name = "ir_mrr"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = MRROptions
    formula = "1 / min{ i ≤ k : grade(id_i) ≥ level }  (0 if none)"
    source = "trec_eval m_recip_rank.c; Voorhees 1999, TREC-8 QA track report"

    def measure(self, q: Judged) -> float:
        return reciprocal_rank(q, self.options.k)


class IRMAP(IRMetric):
    """Average precision (trec_eval map): precision at each relevant rank, over all relevant ids."""

    name = "ir_map"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = MAPOptions
    formula = "Σ_{i ≤ k, rel_i} P@i / |relevant|   (unitxt: / |relevant retrieved|)"
    source = "trec_eval m_map.c, m_map_cut.c; Manning et al. 2008, Introduction to IR, Sec. 8.4"

    def measure(self, q: Judged) -> float:
        return average_precision(q, self.options.k, over_hits=self.options.variant == "unitxt")


class NDCGAtK(IRMetric):
    """Normalised discounted cumulative gain at k with graded gains (trec_eval ndcg_cut)."""

    name = "ndcg_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = NDCGOptions
    formula = "Σ_{i ≤ k} g_i / log2(i + 1)  /  same sum over the ideal order of all judged ids"
    source = "Järvelin & Kekäläinen 2002, ACM TOIS 20(4); trec_eval m_ndcg.c, m_ndcg_cut.c"

    def measure(self, q: Judged) -> float:
        return ndcg(q, self.options.k)


class IRPrecisionAtK(IRMetric):
    """Precision at k: relevant ids among the first k, divided by k (trec_eval P_k)."""

    name = "ir_precision_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = PrecisionOptions
    formula = "|{ i ≤ k : rel_i }| / k   (unitxt: / min(k, retrieved))"
    source = "trec_eval m_P.c; Manning et al. 2008, Introduction to IR, Sec. 8.4"

    def measure(self, q: Judged) -> float:
        return precision(q, self.options.k, capped=self.options.variant == "unitxt")


class IRRecallAtK(IRMetric):
    """Recall at k: relevant ids among the first k, divided by all relevant ids (trec_eval recall_k)."""

    name = "ir_recall_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = CutOptions
    formula = "|{ i ≤ k : rel_i }| / |relevant|"
    source = "trec_eval m_recall.c; Manning et al. 2008, Introduction to IR, Sec. 8.4; Unitxt RetrievalAtK recall"

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        self.value_range = type(self).declared(self.options)[1]

    @classmethod
    def declared(cls, options: CutOptions) -> tuple[str, tuple[float | None, float | None]]:
        """Unitxt's recall counts a relevant id at each position it is listed, so it can exceed 1."""
        return cls.direction, ((0.0, None) if options.variant == "unitxt" else cls.value_range)

    def measure(self, q: Judged) -> float:
        return recall(q, self.options.k)


class HitAtK(IRMetric):
    """Hit at k: 1 when a relevant id is among the first k (trec_eval success_k)."""

    name = "hit_at_k"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = CutOptions
    formula = "1[ ∃ i ≤ k : rel_i ]"
    source = "trec_eval m_success.c; Unitxt RetrievalAtK match_at_k"

    def measure(self, q: Judged) -> float:
        return success(q, self.options.k)


class RPrecision(IRMetric):
    """R-precision: precision at rank R, R the number of relevant ids (trec_eval Rprec)."""

    name = "r_precision"
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = IROptions
    formula = "|{ i ≤ R : rel_i }| / R,  R = |relevant|"
    source = "trec_eval m_Rprec.c; Manning et al. 2008, Introduction to IR, Sec. 8.4"

    def measure(self, q: Judged) -> float:
        return r_precision(q)


@hookimpl
def register_metrics(register):
    """Register the IR metrics."""
    for metric in (IRMRR, IRMAP, NDCGAtK, IRPrecisionAtK, IRRecallAtK, HitAtK, RPrecision):
        register(metric)
