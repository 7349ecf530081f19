"""Scoring stored production traces: the ``traces`` dataset source and the ``trace_replay`` system.

``traces`` turns each stored trace (``ragassay traces import`` / ``receive``) into a sample: the question from
the root span's input, ``metadata["trace"]`` with its ids (trace, root span, answer span), start time, service
name and version, session. ``trace_replay`` answers a sample with what the trace recorded (answer, contexts with
ids and scores, tokens, latency, the span tree, and the agent's steps as the output's trajectory: its agent, tool,
model and retrieval spans, :func:`ragassay.trace_trajectory`): nothing is executed again (it declares ``replays``).

Two deployed versions are two systems: ``trace_replay`` with ``version = "1.0"`` and with ``version = "1.1"``.
A ``mapping`` set on the ``traces`` source is also the replay's, unless a system sets its own.
With ``pair_by = "question"`` the samples are the distinct questions (normalised text) and each version answers
with its own trace of that question, so the usual paired verdicts compare the versions on the questions both
answered; a question one version never got fails that version's unit with the reason, and is left out of the
paired comparison (its n says on how many questions it rests). With ``conversations = true`` the traces of one
session are the turns of one conversation (:mod:`ragassay.plugins.trace_conversations`).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import (
    ConfigError,
    DatasetSource,
    RAGOutput,
    RAGSystem,
    Sample,
    Trace,
    TraceLookup,
    TraceMapping,
    Unmapped,
    dataset_mapping,
    describe_unmapped,
    hookimpl,
    normalize_answer,
    scan_traces,
    trace_trajectory,
)

from .trace_conversations import conversation_samples

SHOWN_UNMAPPED = 10


class TracesOptions(BaseModel):
    """Options of the traces dataset source."""

    model_config = ConfigDict(extra="forbid")

    store: str | None = Field(
        None,
        description="Results database holding the traces: a SQLite path (relative to the project) or a SQLAlchemy "
        "URL; default: the project's [project] results.",
    )
    sample: str | float | None = Field(
        None, description="Score a subset: '5%' or 0.05, chosen by a hash of the trace id (the same on every run)."
    )
    where: dict[str, str | list[str]] = Field(
        default_factory=dict,
        description="Filters: a mapped field (model, service.name, service.version, session.id), a resource or span "
        "attribute (route, ...) -> value or list of values; since/until bound the start time (ISO 8601, UTC).",
    )
    pair_by: Literal["trace", "question"] = Field(
        "trace",
        description="'trace': one sample per trace (id: the trace id). 'question': one sample per distinct "
        "normalised question, so trace_replay systems of two versions pair on the questions both answered.",
    )
    mapping: TraceMapping = Field(
        default_factory=TraceMapping, description="How spans map onto question, answer and contexts."
    )
    conversations: bool = Field(
        False,
        description="Group the traces into conversations by session id (session.id / gen_ai.conversation.id), in "
        "start-time order, each trace a turn (id: session::turn, history: the earlier questions and answers); "
        "sample then picks whole sessions and where the turns to evaluate. A trace without a session id stays a "
        "single question (warned with the count).",
    )

    @model_validator(mode="after")
    def _one_grouping(self) -> TracesOptions:
        if self.conversations and self.pair_by == "question":
            raise ValueError(
                "conversations = true and pair_by = 'question' cannot be combined: a turn is asked in its "
                "conversation, not as a distinct question; use one of them"
            )
        return self


def _store_url(options: Any, context) -> str:
    if options.store:
        return options.store if "://" in options.store else f"sqlite:///{context.resolve(options.store)}"
    url = context.settings.get("results")
    if not url:
        raise ConfigError("the traces store is unknown here: set options.store to the database holding the traces")
    return url


def source_mapping(context) -> TraceMapping:
    """The ``mapping`` option of the project's ``traces`` dataset source, so that it is written once; the standard
    mapping when the source is another one or sets none."""
    dataset = context.settings.get("dataset") or {}
    return dataset_mapping(dataset.get("source", ""), dataset.get("options") or {})


def question_key(question: str) -> str:
    """Sample id of a question under ``pair_by = "question"``: 'q' + 16 hex of sha256(normalised text)."""
    return "q" + hashlib.sha256(normalize_answer(question).encode("utf-8")).hexdigest()[:16]


class TracesSource(DatasetSource):
    """Samples from stored production traces (OTLP), one per trace or per distinct question."""

    name = "traces"
    Options = TracesOptions

    def samples(self) -> Iterator[Sample]:
        unmapped: list[Unmapped] = []
        count = [0]

        def note(item: Unmapped) -> None:
            count[0] += 1
            if len(unmapped) < SHOWN_UNMAPPED:
                unmapped.append(item)

        if self.options.conversations:
            url = _store_url(self.options, self.context)
            yield from conversation_samples(url, self.options, note, self.context.warn)
        elif self.options.pair_by == "question":
            traces = self._traces(note)
            yield from self._by_question(traces)
        else:
            for trace in self._traces(note):
                yield _sample(trace.trace_id, trace)
        if count[0]:
            self.context.warn(describe_unmapped(count[0], unmapped))

    def _traces(self, note) -> Iterator[Trace]:
        opts = self.options
        url = _store_url(opts, self.context)
        for item in scan_traces(url, where=opts.where, sample=opts.sample, mapping=opts.mapping):
            if isinstance(item, Unmapped):
                note(item)
            else:
                yield item

    def _by_question(self, traces: Iterator[Trace]) -> Iterator[Sample]:
        """One sample per normalised question: its earliest trace, and the earliest of each version."""
        found: dict[str, Sample] = {}
        for trace in traces:
            key = question_key(trace.question)
            sample = found.get(key)
            if sample is None:
                found[key] = sample = _sample(key, trace)
            by_version = sample.metadata["traces"]
            known = by_version.get(trace.service_version)
            if known is None or (trace.start_ns, trace.trace_id) < (known["start_ns"], known["trace_id"]):
                by_version[trace.service_version] = trace.ids()
            if (trace.start_ns, trace.trace_id) < (
                sample.metadata["trace"]["start_ns"],
                sample.metadata["trace"]["trace_id"],
            ):
                sample.metadata["trace"] = trace.ids()
                sample.question = trace.question
        yield from found.values()


def _earlier(trace: Trace, ids: dict[str, Any] | None) -> bool:
    """Whether ``trace`` started before the trace of ``ids`` (ties: the smaller trace id); True when none."""
    return ids is None or (trace.start_ns, trace.trace_id) < (ids["start_ns"], ids["trace_id"])


def _sample(question_id: str, trace: Trace) -> Sample:
    return Sample(
        question_id=question_id,
        question=trace.question,
        metadata={"trace": trace.ids(), "traces": {trace.service_version: trace.ids()}},
        service_version=trace.service_version,
        model=trace.model,
    )


class TraceReplayOptions(BaseModel):
    """Options of the trace_replay system."""

    model_config = ConfigDict(extra="forbid")

    store: str | None = Field(None, description="Results database holding the traces (default: the project's).")
    version: str | None = Field(
        None, description="Answer only with traces of this version (the mapping's version_attribute); unset: any."
    )
    mapping: TraceMapping | None = Field(
        None,
        description="How spans map onto the output; unset: the mapping of the project's traces dataset source "
        "(the standard mapping when it sets none).",
    )


class TraceReplayRAG(RAGSystem):
    """Replays what a stored trace recorded (answer, contexts, tokens, latency, span tree): executes nothing.

    The traces are read in bulk: the samples asked for while the run's workers are between two reads are looked
    up together, in one query on one connection kept for the run (memory: only those traces).
    """

    name = "trace_replay"
    Options = TraceReplayOptions
    replays = True

    def prepare(self, corpus) -> None:
        mapping = self.options.mapping or source_mapping(self.context)
        self.mapping = mapping
        self.lookup = TraceLookup(_store_url(self.options, self.context), mapping=mapping)
        self.pending: dict[str, list[asyncio.Future]] = {}

    async def answer(self, sample: Sample) -> RAGOutput:
        trace_id = self._ids(sample)["trace_id"]
        trace = await self._read(trace_id)
        if trace is None:
            raise LookupError(f"trace {trace_id} is not in the traces store")
        if isinstance(trace, Unmapped):
            raise LookupError(f"trace {trace.trace_id} cannot be mapped: {trace.reason}")
        return replay_output(trace, self.mapping)

    async def _read(self, trace_id: str) -> Trace | Unmapped | None:
        """The trace, read with those the other workers ask for before the loop gets to the read."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        if not self.pending:
            loop.call_soon(self._read_pending)
        self.pending.setdefault(trace_id, []).append(future)
        return await future

    def _read_pending(self) -> None:
        pending, self.pending = self.pending, {}
        try:
            found = self.lookup.lookup(list(pending))
        except Exception as exc:  # noqa: BLE001 - each waiting sample fails with it
            found, error = {}, exc
        else:
            error = None
        for trace_id, futures in pending.items():
            for future in futures:
                if future.done():  # cancelled while waiting
                    continue
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(found.get(trace_id))

    def _ids(self, sample: Sample) -> dict[str, Any]:
        meta = sample.metadata
        if "trace" not in meta:
            raise LookupError("the sample carries no trace ids (use the traces dataset source)")
        version = self.options.version
        if version is None:
            return meta["trace"]
        ids = meta.get("traces", {}).get(version)
        if ids is None:
            got = ", ".join(sorted(meta.get("traces", {}))) or "none"
            raise LookupError(f"no trace of version '{version}' for this question (versions: {got})")
        return ids

    async def aclose(self) -> None:
        lookup = getattr(self, "lookup", None)
        if lookup is not None:
            lookup.close()


def replay_output(trace: Trace, mapping: TraceMapping | None = None) -> RAGOutput:
    """The output a trace recorded: answer, contexts, tokens, root latency, the span tree as its trace, and its
    agent steps as the trajectory (:func:`ragassay.trace_trajectory`; the spans that are no step are counted in
    ``trace["trajectory_skipped"]`` by kind)."""
    llm_calls, retrieval_span, spans = 0, False, []
    for s in trace.spans:
        if s.kind == "LLM":
            llm_calls += 1
        elif s.kind in ("RETRIEVER", "RERANKER"):
            retrieval_span = True
        spans.append(
            {
                "span_id": s.span_id,
                "parent_span_id": s.parent_span_id,
                "name": s.name,
                "kind": s.kind,
                "start_ns": s.start_ns,
                "end_ns": s.end_ns,
                "latency_s": s.latency_s,
                "attributes": s.attributes,
                "events": [e.model_dump() for e in s.events],
            }
        )
    latency_s = trace.latency_s
    output_trace: dict[str, Any] = {**trace.ids(), "model": trace.model, "latency_s": latency_s, "spans": spans}
    trajectory = trace_trajectory(trace, mapping)
    if trajectory.skipped:
        output_trace["trajectory_skipped"] = trajectory.skipped
    contexts = trace.contexts
    scores = [c.score for c in contexts]
    if contexts and None not in scores:
        output_trace["scores"] = scores
    ids = [c.id for c in contexts]
    counts = {"input_tokens": trace.tokens.prompt, "output_tokens": trace.tokens.completion, "calls": llm_calls}
    by_model = {f"{_provider(trace)}/{trace.model}": counts} if trace.model and llm_calls else {}
    return RAGOutput(  # the usage given as its fields: validated with the output
        answer=trace.answer,
        contexts=[c.text for c in contexts],
        context_ids=ids if all(ids) else [],
        retrieved=bool(contexts) or retrieval_span,
        usage={**counts, "by_model": by_model},
        latency_s=latency_s,
        trace=output_trace,
        trajectory=trajectory.steps,
    )


def _provider(trace: Trace) -> str:
    """The model provider of the answer span (prices are per provider/model), 'trace' when it names none."""
    for span in trace.spans:
        if span.span_id == trace.answer_span_id:
            for key in ("llm.provider", "gen_ai.provider.name", "gen_ai.system", "llm.system"):
                value = span.attributes.get(key)
                if isinstance(value, str) and value:
                    return value
            break
    return "trace"


@hookimpl
def register_dataset_sources(register):
    register(TracesSource)


@hookimpl
def register_rags(register):
    register(TraceReplayRAG)
