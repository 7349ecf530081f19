"""Table definitions of the current schema version. Change only together with a new migration."""

from __future__ import annotations

from sqlalchemy import (
    Column, Float, ForeignKey, Index, Integer, MetaData, String, Table, Text, UniqueConstraint,
)

SCHEMA_VERSION = 2

metadata = MetaData()

schema_version = Table(
    "schema_version", metadata,
    Column("version", Integer, nullable=False),
)

runs = Table(
    "runs", metadata,
    Column("id", String(64), primary_key=True),
    Column("fingerprint", String(64), nullable=False, index=True),
    Column("project", Text, nullable=False),
    Column("config_path", Text, nullable=False),
    Column("config_json", Text, nullable=False),  # the validated config, as given
    Column("spec_json", Text, nullable=False),  # resolved components: names, versions, options
    Column("ragassay_version", String(32), nullable=False),
    Column("status", String(16), nullable=False),  # running | complete | interrupted
    Column("sample_count", Integer, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)

run_systems = Table(
    "run_systems", metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("name", Text, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("spec_json", Text, nullable=False),
)

run_samples = Table(
    "run_samples", metadata,
    Column("run_id", String(64), ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    Column("question_id", Text, primary_key=True),
    Column("position", Integer, nullable=False),
    Column("sample_json", Text, nullable=False),
)

outputs = Table(
    "outputs", metadata,
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
    UniqueConstraint("run_id", "system", "question_id", name="uq_output_unit"),
)

metric_values = Table(
    "metric_values", metadata,
    Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
    Column("metric", Text, primary_key=True),
    Column("value", Float),  # NULL exactly when unscored
    Column("unscored_reason", Text),
    Column("details_json", Text),
)

judgements = Table(
    "judgements", metadata,
    Column("output_id", Integer, ForeignKey("outputs.id", ondelete="CASCADE"), primary_key=True),
    Column("judge", Text, primary_key=True),
    Column("verdict", Text, nullable=False),
    Column("score", Float),
    Column("explanation", Text),
    Column("judge_id", Text),
)

# Version 2: which process works on which run (see ragassay.store.lease); one row per live or stale lease.
run_leases = Table(
    "run_leases", metadata,
    Column("key", String(64), primary_key=True),  # the run's fingerprint: the INSERT conflict is the lock
    Column("run_id", String(64)),  # the run it covers, once opened or created
    Column("owner", String(64), nullable=False),  # a random token per holder
    Column("host", Text, nullable=False),
    Column("pid", Integer, nullable=False),
    Column("acquired_at", Float, nullable=False),
    Column("heartbeat_at", Float, nullable=False),
)

Index("ix_outputs_run_system", outputs.c.run_id, outputs.c.system)
