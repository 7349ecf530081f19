"""A run's digest and fingerprint do not depend on how its contexts are stored: inline (a schema-3 store), by
reference (schema 4), or inline then migrated. A migrated store resumes its run with nothing left to do."""

from __future__ import annotations

import json

from sqlalchemy import create_engine, text

import ragassay
from ragassay.engine.runner import plan_run
from ragassay.store import SCHEMA_VERSION
from ragassay.store.contexts import unpack

from conftest import BASIC_CONFIG, write_project
from fault_harness import digest


def inline_contexts(url: str) -> None:
    """Rewrite a schema-4 store as schema 3 stored it: each output's full JSON, no ``context_texts``."""
    engine = create_engine(url)
    with engine.begin() as conn:
        texts = dict(conn.execute(text("select key, text from context_texts")).all())
        rows = conn.execute(text("select id, output_json from outputs where output_json is not null")).all()
        for output_id, raw in rows:
            conn.execute(
                text("update outputs set output_json = :raw where id = :id"),
                {"raw": unpack(raw, texts).model_dump_json(), "id": output_id},
            )
        conn.execute(text("drop table context_texts"))
        conn.execute(text("update schema_version set version = 3"))
    engine.dispose()


def stored(url: str, query: str) -> list:
    engine = create_engine(url)
    with engine.connect() as conn:
        rows = conn.execute(text(query)).all()
    engine.dispose()
    return rows


def test_digest_and_fingerprint_are_the_same_inline_by_reference_and_migrated(tmp_path):
    config = write_project(tmp_path, BASIC_CONFIG)
    url = f"sqlite:///{tmp_path / 'ragassay-results.db'}"
    first = ragassay.run(config)
    by_reference = digest(url)
    raws = [raw for (raw,) in stored(url, "select output_json from outputs")]
    assert all("context_keys" in raw and '"contexts"' not in raw for raw in raws)  # every output retrieved

    inline_contexts(url)
    raws = [json.loads(raw) for (raw,) in stored(url, "select output_json from outputs")]
    assert all(raw["contexts"] and "context_keys" not in raw for raw in raws)
    assert digest(url) == by_reference

    fingerprint = plan_run(config).fingerprint()
    assert stored(url, "select fingerprint from runs") == [(fingerprint,)]
    again = ragassay.run(config)  # opens the schema-3 store: migrates it, then finds the run by its fingerprint
    assert again.run_id == first.run_id and again.resumed and again.skipped == again.units and again.completed == 0
    assert stored(url, "select version from schema_version") == [(SCHEMA_VERSION,)]
    assert all("context_keys" in raw for (raw,) in stored(url, "select output_json from outputs"))
    assert digest(url) == by_reference
