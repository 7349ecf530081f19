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
from .scores import JUDGE, METRIC, ScoreRecord, ScoreTable, labels_of
from .usage import Usage

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


@dataclasses.dataclass(frozen=True)
class StoredRows:
    """One sample's rows as the store gave them (:func:`ragassay.results.read_sample`): its outputs, metric values
    and judgements (all repeats), each a dict of every stored column, in the store's order."""

    outputs: list[dict[str, Any]]
    metrics: list[dict[str, Any]]
    judgements: list[dict[str, Any]]


@dataclasses.dataclass(eq=False)
class RunData:
    """One stored run, read once: info, systems, samples, outputs and every score (all repeats)."""

    info: RunInfo
    systems: list[str]
    system_specs: dict[str, dict[str, Any]]
    question_ids: list[str]
    sample_json: list[str]
    outputs: dict[tuple[str, str], OutputRecord]
    score_table: ScoreTable  # every metric value and judgement, all repeats, column by column
    has_payloads: bool = False
    context_texts: dict[str, str] = dataclasses.field(default_factory=dict)  # key -> text, for the payloads
    stored_rows: StoredRows | None = None  # a one-sample read's rows with every stored column (read_sample)

    @property
    def id(self) -> str:
        return self.info.id

    @functools.cached_property
    def samples(self) -> list[Sample]:
        """The samples in dataset order (parsed on first use)."""
        return [Sample.model_validate_json(raw) for raw in self.sample_json]

    @functools.cached_property
    def clusters(self) -> list[str]:
        """Each sample's cluster, in the run's sample order (:attr:`ragassay.models.Sample.cluster`): its
        ``conversation_id`` for a conversation's turn, else its own question_id. The statistics resample and
        permute whole clusters (:mod:`ragassay.analysis.clustered`)."""
        found = []
        for question_id, raw in zip(self.question_ids, self.sample_json):
            conversation = json.loads(raw).get("conversation_id")  # absent from runs stored before conversations
            found.append(question_id if conversation is None else str(conversation))
        return found

    @functools.cached_property
    def conversations(self) -> int | None:
        """How many clusters the samples form when some hold more than one sample (turns of conversations);
        None when every sample is its own (independent samples)."""
        count = len(set(self.clusters))
        return count if count < len(self.clusters) else None

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """question_id -> its position in the run's sample order."""
        return {q: i for i, q in enumerate(self.question_ids)}

    @functools.cached_property
    def metrics(self) -> list[str]:
        """Metric labels: as configured, then any other stored one (sorted)."""
        configured = list(self.info.spec.get("metrics") or {})
        stored = labels_of(self.score_table.columns, METRIC)
        return configured + sorted(stored - set(configured))

    @functools.cached_property
    def judges(self) -> list[str]:
        """Judge labels: as configured, then any other stored one (sorted)."""
        configured = list(self.info.spec.get("judges") or {})
        stored = labels_of(self.score_table.columns, JUDGE)
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
        table, n = self.score_table, len(self.question_ids)
        arrays: dict[tuple[str, str, int], np.ndarray] = {}
        known = np.flatnonzero(table.sample >= 0)
        if not len(known):
            return arrays
        repeats, columns = int(table.repeat.max()) + 1, len(table.columns)
        key = (table.system[known].astype(np.int64) * columns + table.column[known]) * repeats + table.repeat[known]
        order = np.argsort(key, kind="stable")  # rows grouped by (system, column, repeat), stored order within
        groups, starts = np.unique(key[order], return_index=True)
        for group, rows in zip(groups, np.split(known[order], starts[1:])):
            pair, repeat = divmod(int(group), repeats)
            s_index, c_index = divmod(pair, columns)
            column = np.full(n, np.nan)
            column[table.sample[rows]] = table.value[rows]
            kind, label = table.columns[c_index]
            name = label if kind == METRIC else f"judge:{label}"
            arrays[(table.systems[s_index], name, repeat)] = column
        return arrays

    def values(self, system: str, column: str, repeat: int = 0) -> np.ndarray:
        """Per-sample values of ``column`` for ``system`` (repeat ``repeat``), NaN where there is none."""
        found = self._arrays.get((system, column, repeat))
        return found.copy() if found is not None else np.full(len(self.question_ids), np.nan)

    @functools.cached_property
    def unscored(self) -> dict[tuple[str, str], int]:
        """(system, column) -> stored values of repeat 0 that are unscored."""
        table = self.score_table
        rows = (table.repeat == 0) & np.isnan(table.value)
        counts: dict[tuple[str, str], int] = {}
        for s_index, c_index in zip(table.system[rows], table.column[rows]):
            kind, label = table.columns[c_index]
            key = (table.systems[s_index], label if kind == METRIC else f"judge:{label}")
            counts[key] = counts.get(key, 0) + 1
        return counts

    @functools.cached_property
    def scores(self) -> list[ScoreRecord]:
        """Every score as an object, in stored order (built on first use: prefer :meth:`records` or
        :meth:`values` for large runs)."""
        return list(self.score_table.rows())

    def records(self, *, kind: str | None = None, label: str | None = None, repeat: int | None = None) -> list:
        """The scores of one kind (``"metric"``, ``"judge"``), label and repeat, as objects in stored order."""
        table = self.score_table
        mask = np.ones(len(table), dtype=bool)
        if kind is not None:
            mask &= table.kind_mask(kind)
        if label is not None:
            wanted = [i for i, (k, name) in enumerate(table.columns) if name == label and (kind is None or k == kind)]
            mask &= np.isin(table.column, wanted)
        if repeat is not None:
            mask &= table.repeat == repeat
        return list(table.rows(mask))

    def evaluation_usages(self, system: str) -> list[Usage]:
        """The usage of every metric value and judgement of ``system`` that made model calls (or served cached ones)."""
        table = self.score_table
        index = table.systems.index(system) if system in table.systems else -1
        return [usage for row, usage in table.usages.items() if table.system[row] == index]

    def ordered_scores(self, kind: str | None = None) -> list[ScoreRecord]:
        """The scores (of one ``kind`` when given) in the run's order: systems, samples, metrics then judges as
        configured, repeats; scores of a question id outside the run's samples last."""
        table = self.score_table
        if not len(table):
            return []
        place = {name: i for i, name in enumerate(self.systems)}
        system_rank = np.array([place.get(name, len(place) + i) for i, name in enumerate(table.systems)])
        order = {("metric", m): i for i, m in enumerate(self.metrics)}
        order.update({("judge", j): len(order) + i for i, j in enumerate(self.judges)})
        column_rank = np.array([order.get(key, len(order) + i) for i, key in enumerate(table.columns)])
        sample_rank = np.where(table.sample >= 0, table.sample, len(self.question_ids))
        rows = np.lexsort((table.repeat, column_rank[table.column], sample_rank, system_rank[table.system]))
        if kind is not None:
            rows = rows[table.kind_mask(kind)[rows]]
        return [table.record(int(row)) for row in rows]

    def repeats(self) -> Iterator[ScoreRecord]:
        """The scores of the columns that ``run --repeat N`` repeated (repeat 0 included)."""
        table = self.score_table
        repeated = np.unique(table.column[table.repeat > 0])
        return table.rows(np.isin(table.column, repeated)) if len(repeated) else iter(())

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
        if found is None or not found.payload:
            return None
        from ..context_keys import unpack

        return unpack(found.payload, self.context_texts)

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
        ``metadata.<key>`` columns (nested keys joined by dots), then one column per free attribute. Built once
        per run; each call returns a copy."""
        return self._samples_frame.copy()

    @functools.cached_property
    def _samples_frame(self):
        import pandas as pd

        declared = ["question_id", "question", "reference_answers", "reference_contexts", "reference_context_ids"]
        declared += ["is_answerable", "group_id"]
        samples = self.samples
        fields = pd.DataFrame.from_records([{n: getattr(x, n) for n in declared} for x in samples], columns=declared)
        metadata = pd.json_normalize([x.metadata for x in samples], sep=".").add_prefix("metadata.")
        metadata.index = fields.index
        attributes = pd.DataFrame([x.attributes for x in samples], index=fields.index)
        return pd.concat([fields, metadata, attributes], axis=1).set_index("question_id")
