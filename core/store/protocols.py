"""What a results store must do, as declared protocols: nothing outside ``ragassay.store`` calls a store method
that is not declared here (``tests/test_meta.py`` checks it).

- :class:`ResultsWriter`: what a run writes (and the :class:`RunLease` a writer hands out);
- :class:`SettlingWriter`: what a run uses when a writer has it (results turned into rows as they come, so that a
  run buffers rows until the batch is written, not the outputs and values as objects);
- :class:`ResultsReader`: what the read model (:func:`ragassay.results.read_run`, :func:`~ragassay.results.read_sample`,
  :func:`~ragassay.results.read_run_headers`) reads;
- :class:`FastReads`: what a reader uses when a store has it (batches of rows, run versions, context texts by key);
- :class:`LabelStore`: human labels (``ragassay label``, ``ragassay labels import``);
- :class:`TraceStore`: production traces (``ragassay traces import`` / ``receive``, :func:`ragassay.read_traces`);
- :class:`WatchStore`: what ``ragassay watch`` keeps with its run (the traces it decided on, its progress).

:class:`~ragassay.store.ResultsStore` (SQLAlchemy: SQLite, PostgreSQL) implements them all. Another backend
implements them too and is opened by URL scheme (:func:`ragassay.store.register_backend`); nothing outside
``ragassay.store`` reaches past these methods (no engine, no SQL), so the runner, the executors, the read model
and every command work on any backend unchanged. A backend without labels or traces leaves those protocols out:
the commands that need them then say so.

Rows cross the boundary as plain values: :class:`~ragassay.store.units.UnitResult` and :class:`SpanRow` going
in, tuples in the column order of :data:`~ragassay.models.OUTPUT_COLUMNS`,
:data:`~ragassay.models.METRIC_COLUMNS` and :data:`~ragassay.models.JUDGEMENT_COLUMNS` (or dicts of
stored columns, for one sample) and :class:`~ragassay.labels.Label` objects coming out.

A minimal backend (see ``tests/core/store/test_backends.py`` for a complete in-memory one)::

    from ragassay.store import register_backend

    class MemoryStore:                      # every method of ResultsWriter and ResultsReader (and LabelStore,
        ...                                 # TraceStore for labels and traces)

    register_backend("memory", lambda url, **options: MemoryStore())
    # [project] results = "memory://scratch"
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol, runtime_checkable

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
    def concurrent_writers(self) -> bool:
        """Whether many processes write well at once (``[project.ray] write = "auto"`` lets workers write their
        own results only then)."""

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
class SettlingWriter(Protocol):
    """A writer that turns unit results into its rows before their batch is written (the SQLAlchemy store): a run
    then keeps those rows until the write, not the outputs and values as objects. Optional: a run buffers the
    results as they are for a writer without it."""

    def settle_units(self, results: Sequence[Any], context: Any) -> list[Any]:
        """``results`` as this writer writes them: :meth:`ResultsWriter.write_units` takes the list in their place
        and stores the same rows."""


@runtime_checkable
class ResultsReader(Protocol):
    """What the read model reads (:func:`ragassay.results.read_run`, :func:`~ragassay.results.read_sample` and
    :func:`~ragassay.results.read_run_headers`): one call per table."""

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
        """One tuple per stored output (:data:`~ragassay.models.OUTPUT_COLUMNS`, then the output's JSON
        when ``payloads``)."""

    def score_records(self, run_id: str, kind: str, question_ids: Sequence[str] | None = None) -> Iterator[tuple]:
        """Every metric value (``"metric"``) or judgement (``"judge"``) of the run, all repeats, as tuples
        (:data:`~ragassay.models.METRIC_COLUMNS` / :data:`~ragassay.models.JUDGEMENT_COLUMNS`); only those of the
        samples ``question_ids`` when given."""

    def sample_records(
        self, run_id: str, question_id: str
    ) -> tuple[str | None, list[dict], list[dict], list[dict], int]:
        """One sample of a run: its sample JSON (None when the run has no such sample); its outputs, metric values
        and judgements (all repeats) as dicts of their stored columns, at least those of
        :data:`~ragassay.models.OUTPUT_COLUMNS` and ``output_json``, of
        :data:`~ragassay.models.METRIC_COLUMNS` and of :data:`~ragassay.models.JUDGEMENT_COLUMNS`
        (``ragassay show --format json`` prints every column given); and the number of outputs of the whole run."""

    def payload_records(self, run_id: str, question_ids: Sequence[str]) -> list[tuple[str, str, str]]:
        """(system, question_id, output JSON) of the stored outputs of these samples.

        The output JSON is a :class:`~ragassay.RAGOutput`'s, with its contexts inline, or named by key
        (``context_keys``, :mod:`ragassay.store.contexts`): a backend that stores them so also has
        ``context_texts(keys) -> {key: text}`` (:class:`FastReads`), which the read model calls once per read to
        resolve them."""

    def close(self) -> None:
        """Release connections and files."""


@runtime_checkable
class FastReads(Protocol):
    """What a reader uses when the store has it (each is looked for on its own, ``hasattr``), else it does without:
    rows in batches (no Python call per row), a run's version (``ragassay serve`` keeps what it computed from a run
    while the version stays the same), and the texts of contexts that stored outputs name by key."""

    def output_batches(self, run_id: str, *, payloads: bool = False) -> Iterator[list]:
        """:meth:`ResultsReader.output_records` in batches (lists of tuples in the same column order)."""

    def score_batches(self, run_id: str, kind: str) -> Iterator[list]:
        """:meth:`ResultsReader.score_records` of the whole run in batches (lists of tuples)."""

    def run_version(self, ref: str) -> tuple[str, tuple]:
        """The run ``ref`` (an id or unique prefix) and a tuple that changes whenever anything of the run is
        written or its lease is taken, released or goes stale."""

    def context_texts(self, keys: Sequence[str]) -> dict[str, str]:
        """key -> text of the context texts ``keys`` that stored outputs name (``context_keys`` in their JSON)."""


@runtime_checkable
class LabelStore(Protocol):
    """Human labels of a store (:class:`~ragassay.labels.Label`): only ever added; an undo marks one undone. Every
    label is checked against its run before it is stored (the run, the sample and an answer of each system it
    names), else :class:`~ragassay.errors.StoreError` says which; a store that can fills in the digest of the
    answer(s) it judged (``Label.output_digest``, :mod:`ragassay.labels.digest`)."""

    def add_label(self, label: Any) -> None:
        """Store one label."""

    def add_labels(self, labels: Sequence[Any], sources: Sequence[str] | None = None) -> int:
        """Store labels all or none, skipping those stored already as they are; returns how many were added.
        ``sources`` names each label in errors (e.g. ``FILE:LINE``)."""

    def labels(self, run_id: str, rubric: str | None = None, *, annotator: str | None = None) -> list[Any]:
        """The labels that count on ``run_id`` (of ``rubric`` / ``annotator`` when given): the latest label that
        is not undone per (rubric, annotator, item), oldest first."""

    def labels_of_samples(self, sample_ids: Sequence[str], rubric: str | None = None) -> list[Any]:
        """The labels that count on any run for the samples ``sample_ids`` (of ``rubric`` when given), each run's
        latest per (rubric, annotator, item), oldest first: the labels another run may reuse where its answers are
        the same (:func:`ragassay.results.read_reusable_labels`)."""

    def undo_label(self, run_id: str, rubric: str, annotator: str) -> Any | None:
        """Mark ``annotator``'s latest label of ``rubric`` on ``run_id`` undone and return it (None: nothing to
        undo)."""


class SpanRow(NamedTuple):
    """One span going into a :class:`TraceStore`: its ids, start, the attributes of its resource and its JSON (a
    :class:`ragassay.traces.TraceSpan`'s)."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    start_ns: int
    resource: dict[str, Any]
    span_json: str


@runtime_checkable
class TraceStore(Protocol):
    """Production traces of a store, one row per span keyed by (trace id, span id): storing a span again changes
    nothing. :mod:`ragassay.traces` decodes, maps and selects them."""

    def write_spans(
        self, batches: Iterable[Sequence[SpanRow]], *, counts: bool = False, wait_s: float | None = None
    ) -> tuple | None:
        """Store the spans of ``batches``: all of them, or none when producing the batches raises (a malformed
        file); other writers are kept waiting as briefly as the store can (an import is staged, then switched in).
        With ``counts``: (traces, spans) stored before and after, as ``(traces_before, spans_before,
        traces_after, spans_after)``. ``wait_s``: for a list of batches (a received request), the longest wait
        for another writer before a transient error (the receiver then answers 503); None: the store's own."""

    def read_spans(self, trace_ids: Sequence[str] | None = None) -> Iterator[tuple[str, str, dict[str, Any], str]]:
        """(trace id, span id, resource attributes, span JSON) of every stored span (of ``trace_ids`` only when
        given), ordered by trace id, then start, then span id: a trace's spans come together."""


@runtime_checkable
class WatchStore(Protocol):
    """What ``ragassay watch`` keeps with its run (:mod:`ragassay.store.watch`): each batch it scores is committed
    with the traces it decided on and its progress in one transaction, so a watcher killed at any moment, restarted,
    loses no committed value and scores no committed trace again."""

    def watch_spans_after(self, after: tuple[float, str, str], limit: int) -> list[tuple[float, str, str, bool]]:
        """(received_at, trace id, span id, is root) of the spans stored after the cursor ``after`` (in that
        order), at most ``limit``; a span stored later never sorts before a cursor already read."""

    def trace_arrivals(self, trace_ids: Sequence[str]) -> dict[str, tuple[float, bool]]:
        """trace id -> (when its last span was received, whether its root span is stored)."""

    def watch_decided(self, run_id: str, trace_ids: Sequence[str]) -> set[str]:
        """Those of ``trace_ids`` the watch has decided on."""

    def traces_location(self) -> str:
        """Which database the store's traces are in (a digest): two stores with the same location read the same
        traces (the watch hands ``trace_replay`` the traces it read: :func:`ragassay.traces.reading.traces_read`)."""

    def watch_state(self, run_id: str) -> str | None:
        """The watch's progress as stored (JSON), or None before its first commit."""

    def set_watch_state(self, run_id: str, state_json: str) -> None:
        """Replace the watch's progress alone."""

    def commit_watch(
        self,
        run_id: str,
        samples: Sequence[tuple[str, str]],
        results: Sequence[Any],
        context: Any,
        decisions: Sequence[tuple[str, str, str | None, float | None]],
        state_json: str,
    ) -> None:
        """Append ``samples`` to the run, store ``results``, record ``decisions`` ((trace id, status, reason,
        start seconds)) and the progress ``state_json``, all in one transaction."""

    def watch_counts(self, run_id: str) -> dict[str, int]:
        """status -> how many traces the watch decided on with it."""

    def watch_traces(self, run_id: str, status: str, *, last: int | None = None) -> list[tuple[str, str | None]]:
        """(trace id, reason) of the traces decided with ``status`` in the order decided (only the ``last``)."""
