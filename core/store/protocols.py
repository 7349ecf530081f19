"""What a results store must do: :class:`ResultsWriter` (what a run writes) and :class:`ResultsReader` (what
:func:`ragassay.results.read_run` reads), plus the :class:`RunLease` a writer hands out.

:class:`~ragassay.store.ResultsStore` (SQLAlchemy: SQLite, PostgreSQL) implements both. Another backend
implements them too and is opened by URL scheme (:func:`ragassay.store.register_backend`); nothing outside
``ragassay.store`` reaches past these methods (no engine, no SQL), so the runner, the executors and the read
model work on any backend unchanged.

Rows cross the boundary as plain values: :class:`~ragassay.store.units.UnitResult` going in, tuples in the
column order of :data:`~ragassay.store.reads.OUTPUT_COLUMNS`, :data:`~ragassay.store.reads.METRIC_COLUMNS`
and :data:`~ragassay.store.reads.JUDGEMENT_COLUMNS` coming out.

A minimal backend (see ``tests/core/store/test_backends.py`` for a complete in-memory one)::

    from ragassay.store import register_backend

    class MemoryStore:                      # every method of ResultsWriter and ResultsReader
        ...

    register_backend("memory", lambda url, **options: MemoryStore())
    # [project] results = "memory://scratch"
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from ..models import Judgement, MetricValue, RAGOutput, Sample


@runtime_checkable
class RunLease(AbstractContextManager, Protocol):
    """The right of one process to run a config (the key is its fingerprint), held while the run lasts.

    ``notes``: things to tell the user (a stale lease taken over); ``lost``: None, or why the lease was taken
    from this process mid-run (said at the end of the run). :meth:`attach` names the run it now covers.
    Leaving the ``with`` block releases it.
    """

    notes: list[str]
    lost: str | None

    def attach(self, run_id: str) -> None:
        """The lease now covers run ``run_id`` (``ragassay runs`` shows that run as running)."""


@runtime_checkable
class ResultsWriter(Protocol):
    """What a run does with its store: find or create the run, learn what is stored, write batches."""

    @property
    def worker_url(self) -> str | None:
        """A URL that distributed workers open to write their own results (every writer then writes its
        batches concurrently), or None: workers send results back and only this process writes."""

    @property
    def recoveries(self) -> list[str]:
        """Outages of the store this process waited out (one line each), said as warnings at the end."""

    def lease(self, key: str, *, wait: bool = False, on_wait: Any = None) -> RunLease:
        """Take the lease ``key`` (raise :class:`~ragassay.store.lease.LeaseHeldError` naming the holder when
        another live process holds it; with ``wait``, call ``on_wait(holder)`` once and wait for it)."""

    def find_run(self, fingerprint: str) -> dict[str, Any] | None:
        """The newest run with ``fingerprint`` (a dict with at least ``id``), or None."""

    def create_run(
        self, run: dict[str, Any], systems: Sequence[tuple[str, str]], samples: Iterable[Sample | tuple[str, str]]
    ) -> None:
        """Store a new run: its row, its systems (name, spec JSON) in order and its samples (objects or
        (question_id, sample JSON)) in order, all or nothing. ``samples`` can be iterated more than once."""

    def finish_run(self, run_id: str, status: str, warnings: Sequence[str]) -> None:
        """Record the end of a session of a run: its status and every warning it raised."""

    def set_run_spec(self, run_id: str, spec_json: str) -> None:
        """Replace the run's resolved spec JSON (a sequential run adds what it decided under ``"sequential"``)."""

    def has_outputs(self, run_id: str) -> bool:
        """Whether anything is stored for the run (then the run resumes)."""

    def has_reusable(self, run_id: str, system_keys: Sequence[str]) -> bool:
        """Whether another run stored an ok output under one of these system keys."""

    def stored_units_of(self, run_id: str, systems: Sequence[str], question_ids: Sequence[str]) -> dict:
        """(system, question_id) -> :class:`~ragassay.store.units.StoredUnit` for what is stored of these
        units (only the units that have an output)."""

    def reusable_outputs(
        self, run_id: str, system_keys: Sequence[str], sample_keys: Sequence[str] | None = None
    ) -> dict[tuple[str, str], int]:
        """(system key, sample key) -> the id of the newest ok output another run stored with those keys."""

    def load_output(self, output_id: int) -> RAGOutput:
        """The stored output ``output_id``."""

    def reusable_values(self, output_id: int, context: Any) -> dict[str, MetricValue | Judgement]:
        """The stored values of output ``output_id`` whose component still has the same identity in
        ``context`` (:class:`~ragassay.store.database.WriteContext`), by label (judges as ``judge:<label>``)."""

    def metric_values(self, output_id: int) -> dict[str, float | None]:
        """label -> value of output ``output_id``'s repeat-0 metric values (what judges may read)."""

    def metric_value_models(self, output_id: int) -> list[MetricValue]:
        """Every stored metric value of output ``output_id``, all repeats."""

    def judgement_models(self, output_id: int) -> list[Judgement]:
        """Every stored judgement of output ``output_id``, all repeats."""

    def write_units(self, run_id: str, results: Sequence[Any], context: Any, *, replace_existing: bool = False):
        """Store a batch of :class:`~ragassay.store.units.UnitResult` in one transaction: all of it or none,
        and written again after a failure without storing anything twice. ``replace_existing``: a fresh
        output replaces any output stored for the same unit (a unit redone elsewhere)."""

    def close(self) -> None:
        """Release connections, files and threads."""


@runtime_checkable
class ResultsReader(Protocol):
    """What :func:`ragassay.results.read_run` and the run listings read: one call per table."""

    def get_run(self, ref: str) -> dict[str, Any]:
        """The run ``ref`` (an id or a unique prefix); :class:`~ragassay.errors.StoreError` naming the known
        runs when none or several match."""

    def find_run(self, fingerprint: str) -> dict[str, Any] | None:
        """The newest run with ``fingerprint``, or None."""

    def list_runs(self) -> list[dict[str, Any]]:
        """Every run, newest first, with ``outputs``, ``failed``, ``systems`` and ``state``."""

    def run_and_holder(self, ref: str) -> tuple[dict[str, Any], Any]:
        """The run ``ref`` and the live :class:`~ragassay.store.lease.Holder` of its lease (None when none)."""

    def run_systems(self, run_id: str) -> list[dict[str, Any]]:
        """The run's systems in order: dicts with ``name`` and ``spec_json``."""

    def sample_rows(self, run_id: str) -> Iterator[tuple[str, str]]:
        """(question_id, sample JSON) per sample, in dataset order."""

    def output_records(self, run_id: str, *, payloads: bool = False) -> Iterator[tuple]:
        """One tuple per stored output (:data:`~ragassay.store.reads.OUTPUT_COLUMNS`, then the output's JSON
        when ``payloads``)."""

    def score_records(self, run_id: str, kind: str) -> Iterator[tuple]:
        """Every metric value (``"metric"``) or judgement (``"judge"``) of the run, all repeats, as tuples
        (:data:`~ragassay.store.reads.METRIC_COLUMNS` / :data:`~ragassay.store.reads.JUDGEMENT_COLUMNS`)."""

    def payload_records(self, run_id: str, question_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(system, question_id, output JSON) of the stored outputs of these samples.

        The output JSON is a :class:`~ragassay.RAGOutput`'s, with its contexts inline, or named by key
        (``context_keys``, :mod:`ragassay.store.contexts`): a backend that stores them so also has
        ``context_texts(keys) -> {key: text}``, which the read model calls once per read to resolve them."""

    def close(self) -> None:
        """Release connections and files."""
