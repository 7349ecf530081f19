"""Unitxt's lexical RAG metrics over a whole file at once, with Unitxt's bootstrap confidence intervals.

``ragassay unitxt score`` and ``benchmarks/unitxt_metrics.py`` use this: every record of a Unitxt RAG JSONL file
(:mod:`ragassay.unitxt`) is scored by the metrics below in Unitxt 1.26's definitions, then each metric's global
mean gets its 95% BCa interval (:func:`ragassay.analysis.bootstrap.bootstrap_mean_ci`, seed 42, 1000
resamples). Token overlaps of all (prediction, reference) pairs are counted in one vectorised pass
(:func:`ragassay.unitxt.lexical_batch.pair_overlaps`), so 100,000 records take seconds. The per-sample metric plugins
compute the same numbers (tests check that they agree).

=====================================  ==========================================================  =============
ragassay metric                        Unitxt catalog metric                                        main score
=====================================  ==========================================================  =============
token_recall                           metrics.rag.end_to_end.answer_correctness                    recall
k_precision                            metrics.rag.end_to_end.answer_faithfulness                   precision
answer_relevance_token_recall          metrics.rag.end_to_end.answer_relevance.token_recall         recall
context_relevance_token_precision      metrics.rag.end_to_end.context_relevance.token_precision     precision
context_mrr                            metrics.rag.end_to_end.context_correctness                   mrr
context_map                            metrics.rag.end_to_end.context_correctness.map               map
=====================================  ==========================================================  =============

``compat="unitxt"`` (the default here) gives Unitxt's value for every record; ``compat="ragassay"`` reports the
records a metric cannot score (no reference, no context, no tokens) as unscored (NaN, with the reason) instead of
0, exactly as the metric plugins do in that mode.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ..analysis.bootstrap import UNITXT_SEED, MeanInterval, bootstrap_mean_ci
from ..errors import DatasetError
from ..lexical import average_precision, reciprocal_rank, relevance_flags
from .lexical_batch import overlap_scores, pair_overlaps
from .records import UnitxtRecord

UNITXT_NAMES = {
    "token_recall": "metrics.rag.end_to_end.answer_correctness",
    "k_precision": "metrics.rag.end_to_end.answer_faithfulness",
    "answer_relevance_token_recall": "metrics.rag.end_to_end.answer_relevance.token_recall",
    "context_relevance_token_precision": "metrics.rag.end_to_end.context_relevance.token_precision",
    "context_mrr": "metrics.rag.end_to_end.context_correctness",
    "context_map": "metrics.rag.end_to_end.context_correctness.map",
}
METRIC_NAMES = tuple(UNITXT_NAMES)


@dataclasses.dataclass(frozen=True)
class IntervalSettings:
    """How the global confidence intervals are computed (Unitxt's defaults)."""

    n_resamples: int | None = 1000
    confidence_level: float = 0.95
    seed: int = UNITXT_SEED


@dataclasses.dataclass
class BulkScores:
    """Instance scores (``values[i, j]``: record i, metric ``names[j]``; NaN = unscored, reason in ``reasons``)
    and each metric's global mean with its interval (``intervals[j]``; None when intervals were not asked for)."""

    names: list[str]
    values: np.ndarray
    reasons: dict[str, dict[int, str]]
    intervals: list[MeanInterval] | None

    def instance(self, index: int) -> dict[str, float | None]:
        """Record ``index``'s scores by metric name (None = unscored)."""
        row = self.values[index]
        return {name: None if np.isnan(row[j]) else float(row[j]) for j, name in enumerate(self.names)}

    def global_scores(self) -> list[GlobalScore]:
        """Each metric's global score: the mean over scored records, its interval (or why none), the counts."""
        found = []
        for j, name in enumerate(self.names):
            column = self.values[:, j]
            scored = int(np.count_nonzero(~np.isnan(column)))
            interval = self.intervals[j] if self.intervals else None
            found.append(
                GlobalScore(
                    name,
                    UNITXT_NAMES[name],
                    float(np.nanmean(column)) if scored else None,
                    interval.ci_low if interval else None,
                    interval.ci_high if interval else None,
                    scored,
                    len(column),
                    interval.reason if interval else "intervals not asked for",
                )
            )
        return found


@dataclasses.dataclass(frozen=True)
class GlobalScore:
    """One metric's global score over a file: mean of the scored records and its bootstrap interval."""

    metric: str
    unitxt: str  # Unitxt's name of the metric
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    scored: int
    records: int
    no_ci: str | None  # why there is no interval


def check_names(names: Sequence[str]) -> list[str]:
    """The requested metric names, validated against the bulk metrics (one message listing the known ones)."""
    unknown = [name for name in names if name not in UNITXT_NAMES]
    if unknown:
        raise DatasetError(
            f"unknown metric {', '.join(repr(n) for n in unknown)} for Unitxt scoring; "
            f"choose among: {', '.join(METRIC_NAMES)}"
        )
    return list(dict.fromkeys(names))


def score_records(
    records: Sequence[UnitxtRecord],
    names: Sequence[str] = METRIC_NAMES,
    *,
    compat: str = "unitxt",
    intervals: IntervalSettings | None = IntervalSettings(),
) -> BulkScores:
    """Score every record with each metric in ``names``; global means with intervals unless ``intervals`` is None."""
    names = check_names(names)
    missing = next((r for r in records if not r.has_prediction), None)
    if missing is not None:
        raise DatasetError(
            f"line {missing.line} (question_id {missing.question_id!r}) has no 'answer': scoring needs the "
            "predictions (answer, contexts, contexts_ids) on every line."
        )
    reasons: dict[str, dict[int, str]] = {}
    overlaps = _OverlapColumns(records, [n for n in names if n in _OVERLAP_SPECS], compat == "unitxt")
    ranks = _RankColumns(records, compat) if set(names) - set(_OVERLAP_SPECS) else None
    columns = []
    for name in names:
        column, reasons[name] = overlaps.column(name) if name in _OVERLAP_SPECS else ranks.column(name)
        columns.append(column)
    values = np.column_stack(columns) if columns else np.zeros((len(records), 0))
    cis = None
    if intervals is not None:
        found = bootstrap_mean_ci(
            values,
            n_resamples=intervals.n_resamples,
            confidence_level=intervals.confidence_level,
            seed=intervals.seed,
        )
        cis = found if isinstance(found, list) else [found]
    return BulkScores(names, values, reasons, cis)


# -- token overlap metrics -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _OverlapSpec:
    prediction: str  # "answer" or "question"
    references: str  # "reference_answers", "contexts" or "question"
    measure: str  # "precision" or "recall"


_OVERLAP_SPECS = {
    "token_recall": _OverlapSpec("answer", "reference_answers", "recall"),
    "k_precision": _OverlapSpec("answer", "contexts", "precision"),
    "answer_relevance_token_recall": _OverlapSpec("answer", "question", "recall"),
    "context_relevance_token_precision": _OverlapSpec("question", "contexts", "precision"),
}


class _TextTable:
    """Every text of the records in one list (answers, questions, references, contexts; not deduplicated: the
    token engine is faster at tokenising a repeat than Python at finding it) and where each field's texts are."""

    def __init__(self, records: Sequence[UnitxtRecord]):
        n = len(records)
        references = [text for r in records for text in r.reference_answers]
        contexts = [text for r in records for text in r.contexts]
        self.texts = [r.answer or "" for r in records] + [r.question for r in records] + references + contexts
        index = np.arange(n, dtype=np.int64)
        self.single = {"answer": index, "question": index + n}
        self.many = {
            "question": (index + n, index),
            "reference_answers": _ragged(records, "reference_answers", 2 * n),
            "contexts": _ragged(records, "contexts", 2 * n + len(references)),
        }

    def pairs(self, spec: _OverlapSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(prediction text, reference text, record) indices of every pair the metric compares."""
        ref, owner = self.many[spec.references]
        return self.single[spec.prediction][owner], ref, owner


def _ragged(records: Sequence[UnitxtRecord], field: str, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Text indices of a list field laid out record after record from ``base``, and the record of each."""
    counts = np.fromiter((len(getattr(r, field)) for r in records), dtype=np.int64, count=len(records))
    return base + np.arange(int(counts.sum()), dtype=np.int64), np.repeat(np.arange(len(records)), counts)


class _OverlapColumns:
    """The token-overlap metrics of all records, from one :func:`pair_overlaps` call over every pair needed."""

    def __init__(self, records: Sequence[UnitxtRecord], names: Sequence[str], unitxt: bool):
        self.records, self.unitxt = records, unitxt
        table = _TextTable(records)
        pairs = {name: table.pairs(_OVERLAP_SPECS[name]) for name in names}
        pred = np.concatenate([p for p, _, _ in pairs.values()]) if pairs else np.zeros(0, dtype=np.int64)
        ref = np.concatenate([r for _, r, _ in pairs.values()]) if pairs else np.zeros(0, dtype=np.int64)
        counts = pair_overlaps(table.texts, pred, ref)
        precision, recall, _ = overlap_scores(counts)
        self._found: dict[str, tuple] = {}
        start = 0
        for name, (p, _, owner) in pairs.items():
            part = slice(start, start + len(p))
            start += len(p)
            measure = precision if _OVERLAP_SPECS[name].measure == "precision" else recall
            self._found[name] = (measure[part], counts.pred_size[part], counts.ref_size[part], owner)

    def column(self, name: str) -> tuple[np.ndarray, dict[int, str]]:
        spec = _OVERLAP_SPECS[name]
        scores, pred_size, ref_size, owner = self._found[name]
        usable = ref_size > 0 if (spec.references == "reference_answers" and not self.unitxt) else None
        column = _best_per_record(scores, owner, len(self.records), usable)
        return self._unscored(spec, column, pred_size, ref_size, owner)

    def _unscored(self, spec, column, pred_size, ref_size, owner) -> tuple[np.ndarray, dict[int, str]]:
        """NaN with a reason where the ragassay mode does not score (unitxt mode: Unitxt's 0 stays)."""
        reasons: dict[int, str] = {}
        no_pairs = np.isnan(column)
        if self.unitxt:
            column[no_pairs] = 0.0
            return column, reasons
        empty_prediction = np.zeros(len(self.records), dtype=bool)
        empty_prediction[owner[pred_size == 0]] = True
        for i in np.flatnonzero(no_pairs):
            reasons[int(i)] = _no_pair_reason(self.records[i], spec.references)
        if spec.prediction == "question" or spec.references == "contexts":
            for i in np.flatnonzero(empty_prediction & ~no_pairs):
                reasons[int(i)] = f"{spec.prediction} is empty after normalisation"
        if spec.references == "question":  # an empty question is the reference here
            empty_question = np.zeros(len(self.records), dtype=bool)
            empty_question[owner[ref_size == 0]] = True
            for i in np.flatnonzero(empty_question):
                reasons[int(i)] = "question is empty after normalisation"
        column[list(reasons)] = np.nan
        return column, reasons


def _no_pair_reason(record: UnitxtRecord, references: str) -> str:
    if references == "contexts":
        return "no retrieved contexts"
    if references == "reference_answers" and not record.reference_answers:
        return "sample has no reference_answers"
    if references == "reference_answers":
        return "every reference answer is empty after normalisation"
    return "question is empty after normalisation"


def _best_per_record(scores: np.ndarray, owner: np.ndarray, n: int, usable: np.ndarray | None) -> np.ndarray:
    """The maximum score of each record's pairs (NaN for a record without a usable pair)."""
    column = np.full(n, -np.inf)
    if usable is not None:
        scores, owner = scores[usable], owner[usable]
    np.maximum.at(column, owner, scores)
    column[np.isneginf(column)] = np.nan
    return column


# -- id ranking metrics ----------------------------------------------------------------------------------------


class _RankColumns:
    """Unitxt ``MRR`` and ``MAP`` of each record's ``contexts_ids`` against its ``reference_context_ids``, both
    from one pass that judges each retrieved id once."""

    def __init__(self, records: Sequence[UnitxtRecord], compat: str):
        self.values = {"context_mrr": np.empty(len(records)), "context_map": np.empty(len(records))}
        self.reasons: dict[int, str] = {}
        for i, record in enumerate(records):
            reason = None if compat == "unitxt" else _rank_unscored(record)
            if reason is not None:
                self.reasons[i] = reason
                self.values["context_mrr"][i] = self.values["context_map"][i] = np.nan
                continue
            hits = relevance_flags(record.contexts_ids, record.reference_context_ids)
            self.values["context_mrr"][i] = reciprocal_rank(hits)
            self.values["context_map"][i] = average_precision(hits)

    def column(self, name: str) -> tuple[np.ndarray, dict[int, str]]:
        return self.values[name], dict(self.reasons)


def _rank_unscored(record: UnitxtRecord) -> str | None:
    if not record.reference_context_ids:
        return "sample has no reference_context_ids"
    if record.contexts and not record.contexts_ids:
        return "output has contexts but no contexts_ids to match against references"
    return None
