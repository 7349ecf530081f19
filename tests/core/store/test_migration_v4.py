"""Store v3 -> v4: inline context texts move to ``context_texts`` (once each), outputs keep their keys; every
output reads back exactly as it was stored, on SQLite and PostgreSQL. The migration is one transaction (an
interrupted one leaves version 3 as it was) and idempotent."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, inspect, text

from ragassay.models import RAGOutput
from ragassay.results import read_payloads, read_run, read_sample
from ragassay.store import SCHEMA_VERSION, migrations, open_store, store_url
from ragassay.store import contexts as contexts_module
from ragassay.store.migrations import migrate

SHARED = "Salmon swim upstream to spawn in rivers. Zürich's river"
OUTPUTS = {
    ("s", "q1"): RAGOutput(
        answer="a1",
        contexts=[SHARED, "Bees make honey."],
        context_ids=["d1#0", "d2#0"],
        context_document_ids=["d1", "d2"],
        retrieved=True,
        trace={"scores": [2.5, 1.25], "retrieval": {"note": "x"}},
    ),
    ("s", "q2"): RAGOutput(answer="a2", contexts=[SHARED], context_ids=["d1#0"], context_document_ids=["d1"]),
    ("t", "q1"): RAGOutput(answer="no retrieval", retrieved=False),
}


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def stored_outputs(run) -> dict[tuple[str, str], str]:
    """(system, question_id) -> the JSON of every ok output of a run read with payloads, dumped again."""
    return {key: run.payload(*key).model_dump_json() for key, output in run.outputs.items() if output.ok}


def v3_database(url: str) -> dict[tuple[str, str], str]:
    """A version-3 store as version 3 wrote it (contexts inline) with a failed output; returns the JSON."""
    engine = create_engine(url)
    stored = {key: output.model_dump_json() for key, output in OUTPUTS.items()}
    with engine.begin() as conn:
        assert migrate(conn, 3) == [1, 2, 3]
        conn.execute(
            text(
                "insert into runs (id, fingerprint, project, config_path, config_json, spec_json, ragassay_version, "
                "status, sample_count, created_at, updated_at) values ('r1', 'f', 'p', 'c', '{}', '{}', '0.1.0', "
                "'complete', 2, 1, 1)"
            )
        )
        conn.execute(text("insert into run_systems values ('r1', 's', 0, '{}'), ('r1', 't', 1, '{}')"))
        for position, qid in enumerate(("q1", "q2")):
            sample = json.dumps({"question_id": qid, "question": "?"})
            conn.execute(
                text("insert into run_samples values ('r1', :q, :p, :s)"), {"q": qid, "p": position, "s": sample}
            )
        rows = [{"s": s, "q": q, "status": "ok", "raw": raw} for (s, q), raw in stored.items()]
        rows.append({"s": "t", "q": "q2", "status": "failed", "raw": None})
        conn.execute(
            text(
                "insert into outputs (run_id, system, question_id, status, output_json, created_at, input_tokens, "
                "output_tokens) values ('r1', :s, :q, :status, :raw, 1, 0, 0)"
            ),
            rows,
        )
    engine.dispose()
    return stored


def test_v3_contexts_move_to_the_text_table_and_read_back_unchanged(url):
    stored = v3_database(url)
    store = open_store(url, create=False)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("select version from schema_version")).scalar() == SCHEMA_VERSION >= 4
            assert conn.execute(text("select count(*) from context_texts")).scalar() == 2  # SHARED once
            raws = dict(conn.execute(text("select question_id || system, output_json from outputs")).all())
        assert all(SHARED not in (raw or "") for raw in raws.values())
        assert json.loads(raws["q1s"])["context_keys"][0] == json.loads(raws["q2s"])["context_keys"][0]
        assert raws["q2t"] is None
        # every reader gives the output as version 3 stored it, byte for byte once dumped again
        run = read_run(store, "r1", payloads=True)
        assert stored_outputs(run) == stored
        _, payloads = read_sample(store, "r1", "q1")
        assert {system: output.model_dump_json() for (system, _), output in payloads.items()} == {
            "s": stored[("s", "q1")],
            "t": stored[("t", "q1")],
        }
        assert run.payload("s", "q2").model_dump_json() == stored[("s", "q2")]
        assert read_payloads(store, "r1", ["q1"])[("s", "q1")].contexts == OUTPUTS[("s", "q1")].contexts
        ids = dict(
            ((s, q), i)
            for i, s, q in store.engine.connect().execute(text("select id, system, question_id from outputs"))
        )
        assert store.load_output(ids[("s", "q1")]) == OUTPUTS[("s", "q1")]
    finally:
        store.close()


def test_an_interrupted_migration_leaves_version_3_and_a_second_open_completes_it(url, monkeypatch):
    stored = v3_database(url)
    real, calls = contexts_module.store_texts, []

    def failing(conn, texts, table=None):
        calls.append(len(texts))
        if len(calls) == 2:
            raise RuntimeError("killed in the middle of the migration")
        real(conn, texts, table)

    monkeypatch.setattr(migrations, "_V4_OUTPUTS_PER_STEP", 1)  # one output per step: a second step to fail in
    monkeypatch.setattr(contexts_module, "store_texts", failing)
    with pytest.raises(RuntimeError, match="killed"):
        open_store(url, create=False)
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("select version from schema_version")).scalar() == 3
        assert not inspect(conn).has_table("context_texts")  # the table's creation was rolled back too
        raws = {(s, q): raw for s, q, raw in conn.execute(text("select system, question_id, output_json from outputs"))}
    engine.dispose()
    assert {key: raws[key] for key in stored} == stored
    monkeypatch.setattr(contexts_module, "store_texts", real)
    store = open_store(url, create=False)
    try:
        assert stored_outputs(read_run(store, "r1", payloads=True)) == stored
    finally:
        store.close()


def test_the_migration_is_idempotent(url):
    v3_database(url)
    open_store(url, create=False).close()
    engine = create_engine(url)
    query = "select id, output_json from outputs order by id"
    with engine.begin() as conn:
        before = conn.execute(text(query)).all()
        texts = conn.execute(text("select key, text from context_texts order by key")).all()
        migrations._v4_context_texts(conn)  # once more over migrated rows: nothing to move
        assert conn.execute(text(query)).all() == before
        assert conn.execute(text("select key, text from context_texts order by key")).all() == texts
    engine.dispose()
