"""Table definitions of the current schema version. Change only together with a new migration.

Version 2 added what readers used to re-parse from ``output_json`` (retrieval decision and count, calls,
cached tokens, cost), the keys that let a run reuse outputs and scores of earlier runs (``system_key``,
``sample_key``, ``metric_key``, ``judge_key``), metric and judgement details, the evaluation's own cost per
metric value and judgement, and a run's description and warnings.

Version 3 added ``repeat`` to the primary key of ``metric_values`` and ``judgements``: repeat r of a
model-calling metric or judge under ``ragassay run --repeat N`` (0 for every value of a run without repeats).

Version 4 stores every distinct context text once, in ``context_texts`` (key: 32 characters of the text's
sha256); an output's ``output_json`` names its contexts by key (``context_keys``) instead of holding their texts
(see :mod:`ragassay.store.contexts`).

Version 5 stores ingested production traces (``ragassay traces import`` / ``receive``): one row per span in
``trace_spans`` (key: trace id and span id, so a span received twice is stored once) and every distinct resource
once in ``trace_resources`` (see :mod:`ragassay.store.traces`).

Version 6 adds ``labels``: human labels given with ``ragassay label`` or imported with ``ragassay labels import``
(see :mod:`ragassay.store.labels`).

Version 7 adds ``reasoning_tokens`` to ``outputs``, ``metric_values`` and ``judgements``: the part of
``output_tokens`` a reasoning model spent thinking (``TokenUsage.reasoning_tokens``), priced apart.

Version 8 adds two columns to ``labels``: ``output_digest``, what the label judged (the digest of the answer, or
of a pair's two answers: :mod:`ragassay.labels.digest`), filled for the labels stored before from their runs'
answers; and ``probability``, the probability with which an active labelling queue drew the item (NULL otherwise).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
)

SCHEMA_VERSION = 10

metadata = MetaData()

schema_version = Table(
    "schema_version",
    metadata,
    Column("version", Integer, nullable=False),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("fingerprint", String(64), nullable=False, index=True),
    Column("project", Text, nullable=False),
    Column("config_path", Text, nullable=False),
    Column("config_json", Text, nullable=False),  # the validated config, as given
    Column("spec_json", Text, nullable=False),  # resolved components: names, versions, options
    Column("ragassay_version", String(32), nullable=False),
    Column("status", String(16), nullable=False),  # running | complete | budget-limited | settled | interrupted
    Column("sample_count", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("description", Text),  # v2: `ragassay run --description`
    Column("warnings_json", Text),  # v2: warnings found while planning and running (JSON list)
)

run_systems = Table(
    "run_systems",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("spec_json", Text, nullable=False),
)

run_samples = Table(
    "run_samples",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("question_id", Text, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("sample_json", Text, nullable=False),
)


def _usage_columns() -> list[Column]:
    """Token, call and cost columns (v2): of a system's answer, or of one metric value's / judgement's model calls."""
    return [
        Column("calls", Integer, nullable=False, default=0, server_default="0"),
        Column("cached_tokens", Integer, nullable=False, default=0, server_default="0"),
        Column("cache_hits", Integer, nullable=False, default=0, server_default="0"),
        Column("cost_usd", Float),  # NULL when a model has no price
        Column("unpriced", Text),  # models without a price, comma-separated
    ]


outputs = Table(
    "outputs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("system", Text, nullable=False),
    Column("question_id", Text, nullable=False),
    Column("status", String(8), nullable=False),  # ok | failed
    Column("error", Text),
    Column("answer", Text),
    Column("output_json", Text),
    Column("latency_s", Float),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
    Column("system_key", String(64)),  # v2: the resolved system (without its name) and the corpus
    Column("sample_key", String(64)),  # v2: the sample as given
    Column("retrieved", Integer),  # v2: retrieval decision 1/0, NULL when not applicable
    Column("retrieved_count", Integer),  # v2: non-empty contexts returned
    Column("reused_from", Integer),  # v2: id of the output (of an earlier run) this one was copied from
    *_usage_columns(),
    Column("reasoning_tokens", Integer, nullable=False, default=0, server_default="0"),  # v7
    UniqueConstraint("run_id", "system", "question_id", name="uq_output_unit"),
)

metric_values = Table(
    "metric_values",
    metadata,
    Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
    Column("metric", Text, primary_key=True),
    Column("repeat", Integer, primary_key=True, default=0, server_default="0"),  # v3: `run --repeat N`
    Column("value", Float),  # NULL exactly when unscored
    Column("unscored_reason", Text),
    Column("details_json", Text),
    Column("metric_key", String(64)),  # v2: the metric's resolved spec
    Column("input_tokens", Integer, nullable=False, default=0, server_default="0"),  # v2: evaluation cost
    Column("output_tokens", Integer, nullable=False, default=0, server_default="0"),
    *_usage_columns(),
    Column("reasoning_tokens", Integer, nullable=False, default=0, server_default="0"),  # v7: of output_tokens
)

judgements = Table(
    "judgements",
    metadata,
    Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
    Column("judge", Text, primary_key=True),
    Column("repeat", Integer, primary_key=True, default=0, server_default="0"),  # v3: `run --repeat N`
    Column("verdict", Text, nullable=False),
    Column("score", Float),
    Column("explanation", Text),
    Column("judge_id", Text),
    Column("details_json", Text),  # v2
    Column("judge_key", String(64)),  # v2: the judge's resolved spec
    Column("input_tokens", Integer, nullable=False, default=0, server_default="0"),  # v2: evaluation cost
    Column("output_tokens", Integer, nullable=False, default=0, server_default="0"),
    *_usage_columns(),
    Column("reasoning_tokens", Integer, nullable=False, default=0, server_default="0"),  # v7: of output_tokens
)

# Version 4: every distinct context text once (see ragassay.store.contexts); outputs name them by key.
context_texts = Table(
    "context_texts",
    metadata,
    Column("key", String(32), primary_key=True),  # URL-safe base64 of the first 24 bytes of the text's sha256
    Column("text", Text, nullable=False),
)

# Version 5: ingested traces, one row per span (see ragassay.store.traces).
trace_spans = Table(
    "trace_spans",
    metadata,
    Column("trace_id", String(32), primary_key=True),  # 32 lowercase hex characters
    Column("span_id", String(16), primary_key=True),  # 16 lowercase hex characters
    Column("parent_span_id", String(16)),  # NULL for a root span
    Column("start_ns", BigInteger, nullable=False),
    Column("resource_key", String(32), nullable=False),  # trace_resources.key
    Column("span_json", Text, nullable=False),  # the span (ragassay.traces.TraceSpan) as JSON
    Column("received_at", Float, nullable=False),
)

trace_resources = Table(
    "trace_resources",
    metadata,
    Column("key", String(32), primary_key=True),  # 32 hex characters of the sha256 of attributes_json
    Column("attributes_json", Text, nullable=False),
)

# Version 2: which process works on which run (see ragassay.store.lease); one row per live or stale lease.
run_leases = Table(
    "run_leases",
    metadata,
    Column("key", String(64), primary_key=True),  # the run's fingerprint: the INSERT conflict is the lock
    Column("run_id", String(64)),  # the run it covers, once opened or created
    Column("owner", String(64), nullable=False),  # a random token per holder
    Column("host", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("acquired_at", Float, nullable=False),
    Column("heartbeat_at", Float, nullable=False),
)

# Version 5: human labels (see ragassay.store.labels); rows are only added, an undo marks one undone.
labels = Table(
    "labels",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("sample_id", Text, nullable=False),
    Column("system", Text),  # the labelled answer's system (binary and ordinal rubrics)
    Column("systems_json", Text),  # pairwise rubrics: [first, second] as shown
    Column("item_key", Text, nullable=False),  # the item, independent of the order a pair was shown in
    Column("rubric", Text, nullable=False),
    Column("rubric_version", Integer, nullable=False),
    Column("annotator", Text, nullable=False),
    Column("value", Float, nullable=False),
    Column("labelled_at", Float, nullable=False),
    Column("undone_at", Float),  # set by an undo: the label no longer counts
    Column("output_digest", String(32)),  # v7: digest of the answer(s) labelled (ragassay.labels.digest)
    Column("probability", Float),  # v7: an active queue's probability of drawing the item; NULL otherwise
)

# Version 9: what ragassay watch decided per trace, and its progress (see ragassay.store.watch).
watch_traces = Table(
    "watch_traces",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("trace_id", String(32), primary_key=True),
    Column("position", Integer, nullable=False),  # the order in which the watch decided
    Column("status", String(16), nullable=False),  # scored | unscored | unmapped | skipped | reference
    Column("reason", Text),  # why it was not scored (budget, a mapping failure, the rule that left it out)
    Column("started_at", Float),  # the trace's root span start, seconds since the epoch
    Column("decided_at", Float, nullable=False),
)

watch_state = Table(
    "watch_state",
    metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("state_json", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)

Index("ix_outputs_run_system", outputs.c.run_id, outputs.c.system)
Index("ix_outputs_reuse", outputs.c.system_key, outputs.c.sample_key)
Index("ix_labels_run_rubric", labels.c.run_id, labels.c.rubric, labels.c.annotator)
Index("ix_watch_traces_position", watch_traces.c.run_id, watch_traces.c.position)
# Version 10: the watch's cursor pages through spans in (received_at, trace_id, span_id) order (covering: parent)
Index(
    "ix_trace_spans_cursor",
    trace_spans.c.received_at,
    trace_spans.c.trace_id,
    trace_spans.c.span_id,
    trace_spans.c.parent_span_id,
)
