"""RAGChecker's claim-level metrics as pure functions of one :class:`~.model.ClaimChecks`.

Sources: Ru et al., "RAGChecker: A Fine-grained Framework for Diagnosing Retrieval-Augmented Generation"
(NeurIPS 2024, arXiv:2408.08067), section 3.3 (overall, retriever and generator metrics, Figure 1) and the formal
definitions in its appendix; and their code, ``ragchecker/computation.py`` at commit 6091f08 (the function named
in each docstring). Notation: the response has claims ``m_1..m_N`` (``N = len(response_claims)``), the reference
answer claims ``g_1..g_G``, the retrieval ``k`` chunks. "Entailed" means the label ``Entailment``; ``Neutral`` and
``Contradiction`` both count as not entailed (RAGChecker's ``to_bool``). A response claim is *correct* when the
reference answer entails it (``answer2response``); a chunk is *relevant* when it entails at least one reference
claim (``retrieved2answer``); a response claim is *faithful* when some chunk entails it (``retrieved2response``).

Values are fractions in [0, 1]. RAGChecker reports percentages: its per-result ``metrics`` are these fractions
unchanged, and its overall block is ``round(100 * mean, 1)`` (:func:`to_percent`, :func:`ragchecker_block`).

Disputed readings (``Readings``). Noise sensitivity and faithfulness default to RAGChecker's code, which produced
the published numbers; undefined cases default to ragassay's rule (unscored with the reason), not to RAGChecker's
zeros, so per-system means differ from RAGChecker's wherever a case is undefined (:data:`RAGCHECKER_CODE` is
RAGChecker's code in all three):

- noise sensitivity (RAGChecker issue #36, PR #22): the appendix counts an incorrect claim under "relevant" when
  a relevant chunk entails it and under "irrelevant" when an irrelevant chunk does, so one claim may count in
  both; the code keeps them exclusive (a claim entailed by a relevant chunk never counts as irrelevant noise),
  and the maintainers kept the code. ``noise = "exclusive"`` (default) or ``"overlapping"``.
- faithfulness (issue #26): the appendix and the code count every response claim that some chunk entails;
  Figure 1 counts correct claims only when a *relevant* chunk entails them (incorrect claims: any chunk).
  ``faithfulness = "any_chunk"`` (default) or ``"figure"``.
- undefined cases: RAGChecker's code returns 0 whenever a guard fails (no claims, no chunks, nothing recalled),
  also where the formula has another value (hallucination and self-knowledge of a response with no retrieved
  chunk). ``undefined = "unscored"`` (default: a value is a number or unscored with the reason) gives the
  formula's value where it is defined and None with a reason where it is not (0/0); ``"ragchecker"`` reproduces
  the code's zeros (its per-result values and per-system means then match RAGChecker's).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

from .model import ENTAILMENT, ClaimChecks


class NoiseReading(str, Enum):
    """How noise sensitivity splits incorrect, chunk-entailed claims between relevant and irrelevant chunks."""

    EXCLUSIVE = "exclusive"  # RAGChecker's code: irrelevant only when no relevant chunk entails the claim
    OVERLAPPING = "overlapping"  # the paper's appendix as written: a claim may count in both


class FaithfulnessReading(str, Enum):
    """Which response claims faithfulness counts as grounded in the retrieved chunks."""

    ANY_CHUNK = "any_chunk"  # appendix and code: entailed by any retrieved chunk
    FIGURE = "figure"  # Figure 1: correct claims entailed by a relevant chunk, incorrect claims by any chunk


class Undefined(str, Enum):
    """What a metric gives where its formula has no value (or RAGChecker's code guards it off)."""

    UNSCORED = "unscored"  # None with the reason; the formula's value wherever it has one
    RAGCHECKER = "ragchecker"  # 0.0 wherever RAGChecker's code returns its 0. fallback


class Readings(BaseModel):
    """The chosen reading of each disputed definition. Defaults: RAGChecker's code for ``noise`` and
    ``faithfulness``; ``undefined = "unscored"`` (ragassay's rule, not RAGChecker's zeros: :data:`RAGCHECKER_CODE`
    has those)."""

    model_config = ConfigDict(extra="forbid")

    noise: NoiseReading = Field(
        NoiseReading.EXCLUSIVE,
        description="Noise sensitivity: 'exclusive' (RAGChecker's code; a claim entailed by a relevant chunk is "
        "never irrelevant noise) or 'overlapping' (the paper's appendix as written; RAGChecker issue #36).",
    )
    faithfulness: FaithfulnessReading = Field(
        FaithfulnessReading.ANY_CHUNK,
        description="Faithfulness: 'any_chunk' (appendix and code: entailed by any retrieved chunk) or 'figure' "
        "(Figure 1: correct claims only through relevant chunks; RAGChecker issue #26).",
    )
    undefined: Undefined = Field(
        Undefined.UNSCORED,
        description="Where a formula is undefined: 'unscored' (default, ragassay's rule: None with the reason) or "
        "'ragchecker' (0.0, as RAGChecker's code, also where the formula has another value).",
    )


DEFAULT = Readings()
#: RAGChecker's code in every reading: exclusive noise sensitivity, any-chunk faithfulness and its zero fallbacks;
#: per-result values and per-system means are then RAGChecker's (the export uses it).
RAGCHECKER_CODE = Readings(undefined="ragchecker")


@dataclasses.dataclass(frozen=True)
class Score:
    """One metric's value for one result: ``value`` in [0, 1], or None with ``reason``. A value set by
    RAGChecker's convention rather than by the formula (``undefined = "ragchecker"``) also carries the reason."""

    value: float | None
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class MetricInfo:
    """A metric's group in RAGChecker's report and which direction is better."""

    group: str  # overall | retriever | generator
    direction: str  # higher | lower
    summary: str


METRICS: dict[str, MetricInfo] = {
    "precision": MetricInfo("overall", "higher", "share of response claims the reference answer entails"),
    "recall": MetricInfo("overall", "higher", "share of reference claims the response entails"),
    "f1": MetricInfo("overall", "higher", "harmonic mean of precision and recall"),
    "claim_recall": MetricInfo("retriever", "higher", "share of reference claims some retrieved chunk entails"),
    "context_precision": MetricInfo("retriever", "higher", "share of retrieved chunks that are relevant"),
    "context_utilization": MetricInfo("generator", "higher", "share of retrieved reference claims the response has"),
    "noise_sensitivity_in_relevant": MetricInfo("generator", "lower", "incorrect claims from relevant chunks"),
    "noise_sensitivity_in_irrelevant": MetricInfo("generator", "lower", "incorrect claims from irrelevant chunks"),
    "hallucination": MetricInfo("generator", "lower", "incorrect claims no chunk entails"),
    "self_knowledge": MetricInfo("generator", "lower", "correct claims no chunk entails (lower: more grounded)"),
    "faithfulness": MetricInfo("generator", "higher", "response claims grounded in the retrieved chunks"),
}

_NO_RESPONSE_CLAIMS = "the response has no claims"
_NO_ANSWER_CLAIMS = "the reference answer has no claims"
_NO_CHUNKS = "no chunk was retrieved"


class _Missing(Exception):
    """A check list a metric needs was not computed."""


def _need(checks: ClaimChecks, *names: str) -> None:
    missing = [name for name in names if getattr(checks, name) is None]
    if missing:
        raise _Missing(f"{', '.join(missing)} not checked")


def _entailed(labels: Iterable[str]) -> list[bool]:
    return [label == ENTAILMENT for label in labels]


def _any_row(matrix: Sequence[Sequence[str]]) -> list[bool]:
    """Per row (claim): some column (chunk) entails it."""
    return [any(_entailed(row)) for row in matrix]


def _relevant(checks: ClaimChecks) -> list[bool]:
    """Per chunk: it entails at least one reference claim."""
    rows = checks.retrieved2answer or []
    return [any(row[c] == ENTAILMENT for row in rows) for c in range(checks.chunk_count)]


def _mean(flags: Sequence[bool]) -> float:
    """The share of true flags (count / n: exactly numpy's mean of a boolean array)."""
    return sum(flags) / len(flags)


def _guarded(reason: str, readings: Readings) -> Score:
    """The value of a guarded case: None with the reason, or RAGChecker's 0.0 with it."""
    return (
        Score(0.0, f"{reason}: 0 by RAGChecker's convention")
        if readings.undefined == Undefined.RAGCHECKER
        else Score(None, reason)
    )


def _checked(metric):
    """Turn a missing check list into an unscored Score naming it."""

    @functools.wraps(metric)
    def wrapper(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
        try:
            return metric(checks, readings)
        except _Missing as missing:
            return Score(None, str(missing))

    return wrapper


# -- overall metrics (paper section 3.3, "Overall Metrics") ---------------------------------------------------------


@_checked
def precision(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Precision = |{m_i : the reference answer entails m_i}| / N.

    Paper: section 3.3, overall metrics (correct claims over all response claims). Code: ``evaluate_precision``
    (mean of ``answer2response == "Entailment"``). N = 0: undefined (RAGChecker: 0).
    """
    _need(checks, "answer2response")
    if not checks.response_claims:
        return _guarded(_NO_RESPONSE_CLAIMS, readings)
    return Score(_mean(_entailed(checks.answer2response)))


@_checked
def recall(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Recall = |{g_j : the response entails g_j}| / G.

    Paper: section 3.3, overall metrics (reference claims the response covers). Code: ``evaluate_recall``
    (mean of ``response2answer == "Entailment"``). G = 0: undefined (RAGChecker: 0).
    """
    _need(checks, "response2answer")
    if not checks.gt_answer_claims:
        return _guarded(_NO_ANSWER_CLAIMS, readings)
    return Score(_mean(_entailed(checks.response2answer)))


@_checked
def f1(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """F1 = 2 * precision * recall / (precision + recall).

    Paper: section 3.3 (harmonic mean of precision and recall). Code: ``evaluate_f1``, which gives 0 unless both
    are positive; 0 is also the formula's limit when one of them is 0. Unscored when precision or recall is.
    """
    p, r = precision(checks, readings), recall(checks, readings)
    if p.value is None or r.value is None:
        return Score(None, "; ".join(s.reason for s in (p, r) if s.value is None))
    if p.value > 0 and r.value > 0:
        return Score(2 * p.value * r.value / (p.value + r.value))
    return Score(0.0, p.reason or r.reason)


# -- retriever metrics (paper section 3.3, "Retriever Metrics") -----------------------------------------------------


@_checked
def claim_recall(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Claim recall = |{g_j : some retrieved chunk entails g_j}| / G.

    Paper: section 3.3, retriever metrics. Code: ``evaluate_retrieval`` (mean over reference claims of the max
    over chunks of ``retrieved2answer``). G = 0: undefined; k = 0: 0 (no claim is covered; RAGChecker: 0 too).
    """
    _need(checks, "retrieved2answer")
    if not checks.gt_answer_claims:
        return _guarded(_NO_ANSWER_CLAIMS, readings)
    if not checks.chunk_count:
        return Score(0.0, _NO_CHUNKS)
    return Score(_mean(_any_row(checks.retrieved2answer)))


@_checked
def context_precision(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Context precision = |{relevant chunks}| / k, a chunk being relevant when it entails some reference claim.

    Paper: section 3.3, retriever metrics. Code: ``evaluate_retrieval`` (mean over chunks of the max over
    reference claims of ``retrieved2answer``). k = 0 or G = 0: undefined (RAGChecker: 0).
    """
    _need(checks, "retrieved2answer")
    if not checks.gt_answer_claims:
        return _guarded(f"{_NO_ANSWER_CLAIMS}: no chunk can be relevant", readings)
    if not checks.chunk_count:
        return _guarded(_NO_CHUNKS, readings)
    return Score(_mean(_relevant(checks)))


# -- generator metrics (paper section 3.3, "Generator Metrics") -----------------------------------------------------


@_checked
def context_utilization(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Context utilization = |{g_j : a chunk entails g_j and the response entails g_j}| / |{g_j : a chunk entails g_j}|.

    Paper: section 3.3, generator metrics. Code: ``evaluate_context_utilization``. No reference claim covered by
    the chunks (G = 0, k = 0 or none entailed): undefined, 0/0 (RAGChecker: 0).
    """
    _need(checks, "retrieved2answer", "response2answer")
    if not checks.gt_answer_claims:
        return _guarded(_NO_ANSWER_CLAIMS, readings)
    if not checks.chunk_count:
        return _guarded(_NO_CHUNKS, readings)
    covered = _any_row(checks.retrieved2answer)
    if not any(covered):
        return _guarded("no reference claim is entailed by a retrieved chunk", readings)
    used = [c and e for c, e in zip(covered, _entailed(checks.response2answer))]
    return Score(sum(used) / sum(covered))


def noise_sensitivity(checks: ClaimChecks, readings: Readings = DEFAULT) -> tuple[Score, Score]:
    """(in relevant, in irrelevant) noise sensitivity: the share of response claims that are incorrect and that a
    relevant (resp. irrelevant) chunk entails, over N.

    Paper: section 3.3, generator metrics, and the appendix: NS(relevant) = |{m_i : m_i incorrect and a relevant
    chunk entails m_i}| / N, NS(irrelevant) likewise with irrelevant chunks. Code: ``evaluate_noise_sensitivity``,
    which also removes from the irrelevant count every claim a relevant chunk entails (``readings.noise``: the
    default "exclusive" is the code, "overlapping" the appendix as written; issue #36). N = 0 or G = 0 (relevance
    undefined): undefined; k = 0: both 0 (no chunk entails anything). RAGChecker: 0 when N, k or G is 0.
    """
    try:
        _need(checks, "retrieved2response", "answer2response", "retrieved2answer")
    except _Missing as missing:
        return Score(None, str(missing)), Score(None, str(missing))
    guard = _NO_RESPONSE_CLAIMS if not checks.response_claims else None
    guard = guard or (f"{_NO_ANSWER_CLAIMS}: no chunk can be relevant" if not checks.gt_answer_claims else None)
    if guard is None and not checks.chunk_count:
        if readings.undefined == Undefined.RAGCHECKER:
            guard = _NO_CHUNKS
        else:
            return Score(0.0, _NO_CHUNKS), Score(0.0, _NO_CHUNKS)
    if guard:
        return _guarded(guard, readings), _guarded(guard, readings)
    relevant = _relevant(checks)
    incorrect = [not e for e in _entailed(checks.answer2response)]
    in_relevant, in_irrelevant = [], []
    for row, wrong in zip(checks.retrieved2response, incorrect):
        by_relevant = any(label == ENTAILMENT and rel for label, rel in zip(row, relevant))
        by_irrelevant = any(label == ENTAILMENT and not rel for label, rel in zip(row, relevant))
        if readings.noise == NoiseReading.EXCLUSIVE:
            by_irrelevant = by_irrelevant and not by_relevant
        in_relevant.append(wrong and by_relevant)
        in_irrelevant.append(wrong and by_irrelevant)
    return Score(_mean(in_relevant)), Score(_mean(in_irrelevant))


def noise_sensitivity_in_relevant(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Noise sensitivity in relevant chunks: the first value of :func:`noise_sensitivity` (formula there)."""
    return noise_sensitivity(checks, readings)[0]


def noise_sensitivity_in_irrelevant(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Noise sensitivity in irrelevant chunks: the second value of :func:`noise_sensitivity` (formula there)."""
    return noise_sensitivity(checks, readings)[1]


def unfaithfulness(checks: ClaimChecks, readings: Readings = DEFAULT) -> tuple[Score, Score]:
    """(hallucination, self-knowledge) over the response claims that no retrieved chunk entails.

    Hallucination = |{m_i : incorrect and no chunk entails m_i}| / N; self-knowledge = |{m_i : correct and no chunk
    entails m_i}| / N. Paper: section 3.3, generator metrics (and appendix). Code: ``evaluate_unfaithfulness``.
    N = 0: undefined. k = 0: every claim is unfaithful, so hallucination is the share of incorrect claims and
    self-knowledge the share of correct ones; RAGChecker's code returns 0 for both (its guard needs k > 0), which
    is not the formula's value (``undefined = "ragchecker"`` reproduces it).
    """
    try:
        _need(checks, "retrieved2response", "answer2response")
    except _Missing as missing:
        return Score(None, str(missing)), Score(None, str(missing))
    if not checks.response_claims:
        return _guarded(_NO_RESPONSE_CLAIMS, readings), _guarded(_NO_RESPONSE_CLAIMS, readings)
    if not checks.chunk_count and readings.undefined == Undefined.RAGCHECKER:
        return _guarded(_NO_CHUNKS, readings), _guarded(_NO_CHUNKS, readings)
    unfaithful = [not f for f in _any_row(checks.retrieved2response)]
    correct = _entailed(checks.answer2response)
    hallucinated = [u and not c for u, c in zip(unfaithful, correct)]
    known = [u and c for u, c in zip(unfaithful, correct)]
    note = _NO_CHUNKS if not checks.chunk_count else None
    return Score(_mean(hallucinated), note), Score(_mean(known), note)


def hallucination(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Hallucination: the first value of :func:`unfaithfulness` (formula there)."""
    return unfaithfulness(checks, readings)[0]


def self_knowledge(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Self-knowledge: the second value of :func:`unfaithfulness` (formula there)."""
    return unfaithfulness(checks, readings)[1]


@_checked
def faithfulness(checks: ClaimChecks, readings: Readings = DEFAULT) -> Score:
    """Faithfulness = |{m_i : some retrieved chunk entails m_i}| / N (``readings.faithfulness = "any_chunk"``).

    Paper: appendix; code: ``evaluate_faithfulness``; with the default reading, faithfulness + hallucination +
    self-knowledge = 1. Figure 1 of the paper draws it as (correct claims entailed by a *relevant* chunk +
    incorrect claims entailed by any chunk) / N ("figure" reading, RAGChecker issue #26; it needs answer2response
    and retrieved2answer too, and G > 0). N = 0: undefined; k = 0: 0 (RAGChecker: 0 for both).
    """
    _need(checks, "retrieved2response")
    figure = readings.faithfulness == FaithfulnessReading.FIGURE
    if figure:
        _need(checks, "answer2response", "retrieved2answer")
    if not checks.response_claims:
        return _guarded(_NO_RESPONSE_CLAIMS, readings)
    if not checks.chunk_count:
        return Score(0.0, _NO_CHUNKS)
    if not figure:
        return Score(_mean(_any_row(checks.retrieved2response)))
    if not checks.gt_answer_claims and readings.undefined == Undefined.UNSCORED:
        return Score(None, f"{_NO_ANSWER_CLAIMS}: no chunk can be relevant (figure reading)")
    relevant = _relevant(checks)
    grounded = []
    for row, correct in zip(checks.retrieved2response, _entailed(checks.answer2response)):
        grounded.append(any(label == ENTAILMENT and (rel or not correct) for label, rel in zip(row, relevant)))
    return Score(_mean(grounded))


# -- all metrics of one result, and RAGChecker's per-system block ---------------------------------------------------


def compute_all(checks: ClaimChecks, readings: Readings = DEFAULT) -> dict[str, Score]:
    """Every metric of :data:`METRICS` for one result, in RAGChecker's order."""
    in_relevant, in_irrelevant = noise_sensitivity(checks, readings)
    hallucinated, known = unfaithfulness(checks, readings)
    scores = {
        "precision": precision(checks, readings),
        "recall": recall(checks, readings),
        "f1": f1(checks, readings),
        "claim_recall": claim_recall(checks, readings),
        "context_precision": context_precision(checks, readings),
        "context_utilization": context_utilization(checks, readings),
        "noise_sensitivity_in_relevant": in_relevant,
        "noise_sensitivity_in_irrelevant": in_irrelevant,
        "hallucination": hallucinated,
        "self_knowledge": known,
        "faithfulness": faithfulness(checks, readings),
    }
    return {name: scores[name] for name in METRICS}


def system_mean(values: Iterable[float | None]) -> float | None:
    """The per-system value of a metric: the mean of the per-result values, None excluded (None when none).

    RAGChecker (``RAGChecker.evaluate`` in ``ragchecker/evaluator.py``) averages per-result values (a macro
    average: each result weighs the same, whatever its number of claims), not pooled claim counts; it has no
    undefined values (its code returns 0 instead), so with ``undefined = "ragchecker"`` this mean is its mean.
    ragassay's own per-system means (compare, report, gate) are the same mean over scored samples.
    """
    import numpy as np  # RAGChecker's np.mean: the same pairwise summation, so the same last bit

    defined = [value for value in values if value is not None]
    return float(np.mean(defined)) if defined else None


def to_percent(value: float | None) -> float | None:
    """A fraction on RAGChecker's report scale: ``round(100 * value, 1)`` with numpy's rounding, as RAGChecker
    rounds its np.float64 means (``evaluator.py``)."""
    import numpy as np

    return None if value is None else float(np.round(np.float64(value) * 100, 1))


#: The keys of RAGChecker's overall block, by group: ``ragchecker/metrics.py`` (``overall_metrics`` ...), which
#: ``RAGChecker.evaluate`` writes into (its own example file still has the older ``overall`` ...).
BLOCK_KEYS = {"overall": "overall_metrics", "retriever": "retriever_metrics", "generator": "generator_metrics"}


def ragchecker_block(results: Sequence[Mapping[str, Score]]) -> dict[str, dict[str, float | None]]:
    """RAGChecker's overall ``metrics`` block (groups ``overall_metrics`` / ``retriever_metrics`` /
    ``generator_metrics``, :data:`BLOCK_KEYS`; percent, one decimal) from the per-result scores of
    :func:`compute_all`."""
    block: dict[str, dict[str, float | None]] = {key: {} for key in BLOCK_KEYS.values()}
    for name, info in METRICS.items():
        block[BLOCK_KEYS[info.group]][name] = to_percent(system_mean(result[name].value for result in results))
    return block
