"""The read model: one stored run as a typed object, read once (:func:`ragassay.results.read_run`).

Every analysis (comparison, verdicts, breakdowns, cost, plan, meta-eval, variance, decisions, the GRAMMAR
report, the gate) is a pure function of a :class:`RunData`; the CLI, the HTML report, the pytest plugin and
:class:`ragassay.Run` read a run once and hand the same object to all of them. Nothing here touches the store.

A column is a metric label as configured (``token_recall``) or a judge as ``judge:<label>``; per-sample arrays
follow the run's sample order, NaN where a value is unscored or its output failed or is missing.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..models import RAGOutput, Sample

MISSING, OK, FAILED = "missing", "ok", "failed"


@dataclasses.dataclass(frozen=True)
class RunInfo:
    """A run's metadata: identity, project, state, the stored config and resolved spec, warnings."""

    id: str
    fingerprint: str
    project: str
    config_path: str
    description: str
    created_at: float
    updated_at: float
    status: str  # the stored status column
    state: str  # running | complete | interrupted (from the run's lease and its outputs)
    state_detail: str
    ragassay_version: str
    sample_count: int
    config: dict[str, Any]
    spec: dict[str, Any]
    warnings: list[str]


@dataclasses.dataclass(frozen=True, slots=True)
class Usage:
    """Tokens, model calls and cost of an answer or of a metric value's / judgement's own model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    calls: int = 0
    cache_hits: int = 0
    cost_usd: float | None = 0.0  # None when a model used has no price
    unpriced: tuple[str, ...] = ()

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def of(values: tuple) -> Usage:
        """From the stored (input, output, cached tokens, calls, cache hits, cost, unpriced) columns (the same
        columns give the same, shared, frozen object: most rows of a run spend nothing)."""
        tin, tout, cached, calls, hits, cost, unpriced = values
        models = tuple(sorted({m.strip() for m in (unpriced or "").split(",") if m.strip()}))
        return Usage(tin or 0, tout or 0, cached or 0, calls or 0, hits or 0, cost, models)


@dataclasses.dataclass(frozen=True, slots=True)
class OutputRecord:
    """One stored output: status, error, latency, usage, retrieval decision and count, reuse."""

    system: str
    question_id: str
    status: str  # ok | failed
    error: str | None
    latency_s: float | None
    usage: Usage
    retrieved: bool | None
    retrieved_count: int | None
    reused_from: int | None
    payload: str | None = None  # the output's JSON, when read with payloads

    @property
    def ok(self) -> bool:
        return self.status == OK


@dataclasses.dataclass(frozen=True, slots=True)
class ScoreRecord:
    """One stored metric value or judgement (``kind``), any repeat. ``value`` is the metric's value or the
    judge's score (None exactly when unscored); ``verdict`` and ``explanation`` are the judge's."""

    system: str
    question_id: str
    kind: str  # metric | judge
    label: str
    repeat: int
    value: float | None
    unscored_reason: str | None
    verdict: str | None
    explanation: str | None
    judge_id: str | None
    details_json: str | None
    usage: Usage

    @property
    def column(self) -> str:
        """The comparison column: the metric label, or ``judge:<label>``."""
        return self.label if self.kind == "metric" else f"judge:{self.label}"

    @property
    def details(self) -> dict[str, Any]:
        return json.loads(self.details_json) if self.details_json else {}


@dataclasses.dataclass(eq=False)
class RunData:
    """One stored run, read once: info, systems, samples, outputs and every score (all repeats)."""

    info: RunInfo
    systems: list[str]
    system_specs: dict[str, dict[str, Any]]
    question_ids: list[str]
    sample_json: list[str]
    outputs: dict[tuple[str, str], OutputRecord]
    scores: list[ScoreRecord]  # as stored (any order); :attr:`ordered_scores` in the run's order
    has_payloads: bool = False

    @property
    def id(self) -> str:
        return self.info.id

    @functools.cached_property
    def samples(self) -> list[Sample]:
        """The samples in dataset order (parsed on first use)."""
        return [Sample.model_validate_json(raw) for raw in self.sample_json]

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """question_id -> its position in the run's sample order."""
        return {q: i for i, q in enumerate(self.question_ids)}

    @functools.cached_property
    def metrics(self) -> list[str]:
        """Metric labels: as configured, then any other stored one (sorted)."""
        configured = list(self.info.spec.get("metrics") or {})
        stored = {s.label for s in self.scores if s.kind == "metric"}
        return configured + sorted(stored - set(configured))

    @functools.cached_property
    def judges(self) -> list[str]:
        """Judge labels: as configured, then any other stored one (sorted)."""
        configured = list(self.info.spec.get("judges") or {})
        stored = {s.label for s in self.scores if s.kind == "judge"}
        return configured + sorted(stored - set(configured))

    @property
    def columns(self) -> list[str]:
        """Every comparison column: metrics, then ``judge:<label>`` per judge."""
        return self.metrics + [f"judge:{j}" for j in self.judges]

    def traits(self, column: str) -> dict[str, Any]:
        """A metric's stored traits (direction, value_range); a judge is higher-is-better in [0, 1]."""
        if column.startswith("judge:"):
            return {"direction": "higher", "value_range": [0.0, 1.0]}
        return dict(((self.info.spec.get("metrics") or {}).get(column) or {}).get("traits") or {})

    def judge_traits(self, label: str) -> dict[str, Any]:
        """A judge's stored traits (``reference_based``, ...)."""
        return dict(((self.info.spec.get("judges") or {}).get(label) or {}).get("traits") or {})

    def direction(self, column: str) -> str:
        """ "higher" or "lower": which value of ``column`` is better (default higher)."""
        return self.traits(column).get("direction", "higher")

    def value_range(self, column: str) -> tuple[float | None, float | None]:
        """The declared (low, high) of ``column``; None for an open end."""
        low, high = self.traits(column).get("value_range") or (None, None)
        return low, high

    @functools.cached_property
    def _arrays(self) -> dict[tuple[str, str, int], np.ndarray]:
        arrays: dict[tuple[str, str, int], np.ndarray] = {}
        n, position = len(self.question_ids), self.position
        for s in self.scores:
            key = (s.system, s.column, s.repeat)
            column = arrays.get(key)
            if column is None:
                column = arrays[key] = np.full(n, np.nan)
            if s.value is not None and s.question_id in position:
                column[position[s.question_id]] = s.value
        return arrays

    def values(self, system: str, column: str, repeat: int = 0) -> np.ndarray:
        """Per-sample values of ``column`` for ``system`` (repeat ``repeat``), NaN where there is none."""
        found = self._arrays.get((system, column, repeat))
        return found.copy() if found is not None else np.full(len(self.question_ids), np.nan)

    @functools.cached_property
    def unscored(self) -> dict[tuple[str, str], int]:
        """(system, column) -> stored values of repeat 0 that are unscored."""
        counts: dict[tuple[str, str], int] = {}
        for s in self.scores:
            if s.repeat == 0 and s.value is None:
                counts[(s.system, s.column)] = counts.get((s.system, s.column), 0) + 1
        return counts

    @functools.cached_property
    def ordered_scores(self) -> list[ScoreRecord]:
        """The scores in the run's order: systems, samples, metrics then judges as configured, repeats."""
        place = {name: i for i, name in enumerate(self.systems)}
        labels = {("metric", m): i for i, m in enumerate(self.metrics)}
        labels.update({("judge", j): len(labels) + i for i, j in enumerate(self.judges)})
        position = self.position

        def key(s: ScoreRecord) -> tuple:
            return (
                place.get(s.system, len(place)),
                s.system,
                position.get(s.question_id, len(position)),
                s.question_id,
                labels.get((s.kind, s.label), len(labels)),
                s.repeat,
            )

        return sorted(self.scores, key=key)

    def repeats(self) -> Iterator[ScoreRecord]:
        """The scores of the columns that ``run --repeat N`` repeated (repeat 0 included)."""
        repeated = {(s.column) for s in self.scores if s.repeat > 0}
        return (s for s in self.scores if s.column in repeated)

    def output(self, system: str, question_id: str) -> OutputRecord | None:
        """The stored output of (system, sample), or None when it was never produced."""
        return self.outputs.get((system, question_id))

    def status(self, system: str, question_id: str) -> str:
        """ok, failed or missing (never stored: an interrupted run)."""
        found = self.outputs.get((system, question_id))
        return MISSING if found is None else found.status

    def payload(self, system: str, question_id: str) -> RAGOutput | None:
        """The stored output itself (answer, contexts, ...): needs a read with payloads."""
        if not self.has_payloads:
            raise ValueError("this run was read without payloads: read_run(store, run, payloads=True)")
        found = self.outputs.get((system, question_id))
        return RAGOutput.model_validate_json(found.payload) if found is not None and found.payload else None

    def latencies(self, system: str) -> np.ndarray:
        """Latency in seconds of every ok output of ``system`` that reports one, in sample order."""
        found = (self.outputs.get((system, q)) for q in self.question_ids)
        return np.array([o.latency_s for o in found if o is not None and o.ok and o.latency_s is not None], dtype=float)

    def rag_name(self, system: str) -> str:
        """The name of the RAG component of ``system``."""
        return (self.system_specs.get(system, {}).get("rag") or {}).get("name", "")

    def retrieval_role(self, system: str) -> str | None:
        """How ``system``'s RAG uses retrieval (``RAGSystem.retrieval``: always, never, decides), as stored."""
        return ((self.system_specs.get(system, {}).get("rag") or {}).get("traits") or {}).get("retrieval")

    def scores_frame(self, repeat: int = 0):
        """Repeat ``repeat`` of every column, wide (a pandas DataFrame): indexed by (system, question_id) in run
        order, one column per metric, then ``judge:<label>``; NaN where unscored, failed or missing."""
        import pandas as pd

        index = pd.MultiIndex.from_product([self.systems, self.question_ids], names=["system", "question_id"])
        columns = self.columns
        if not columns:
            return pd.DataFrame(index=index, dtype=float)
        data = {c: np.concatenate([self.values(s, c, repeat) for s in self.systems]) for c in columns}
        return pd.DataFrame(data, index=index, columns=columns, dtype=float)

    def samples_frame(self):
        """One row per sample (a pandas DataFrame indexed by ``question_id``): the declared fields,
        ``metadata.<key>`` columns (nested keys joined by dots), then one column per free attribute."""
        import pandas as pd

        declared = ["question_id", "question", "reference_answers", "reference_contexts", "reference_context_ids"]
        declared += ["is_answerable", "group_id"]
        samples = self.samples
        fields = pd.DataFrame.from_records([{n: getattr(x, n) for n in declared} for x in samples], columns=declared)
        metadata = pd.json_normalize([x.metadata for x in samples], sep=".").add_prefix("metadata.")
        metadata.index = fields.index
        attributes = pd.DataFrame([x.attributes for x in samples], index=fields.index)
        return pd.concat([fields, metadata, attributes], axis=1).set_index("question_id")
