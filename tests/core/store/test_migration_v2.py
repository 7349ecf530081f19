"""Store v1 -> v2: a results database written by ragassay 0.1.0's v1 code (tests/data/results_v1.db, the
quickstart with 4 samples: keyword, BM25, dense, hybrid) is upgraded in place, its rows kept, the new columns derived from
the stored outputs, and it reads like a database created at v2."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from sqlalchemy import inspect

from ragassay.analysis.comparison import compare
from ragassay.results import read_run
from ragassay.store import SCHEMA_VERSION, open_store
from ragassay.store import schema as current
from tests.conftest import ragassay_cli

V1 = Path(__file__).resolve().parents[2] / "data" / "results_v1.db"


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / "results.db"
    shutil.copy(V1, path)
    return path


def _counts(path: Path) -> dict[str, int]:
    con = sqlite3.connect(path)
    try:
        return {
            table: con.execute(f"select count(*) from {table}").fetchone()[0]
            for table in ("runs", "run_systems", "run_samples", "outputs", "metric_values", "judgements")
        }
    finally:
        con.close()


def test_v1_database_is_migrated_with_rows_kept_and_columns_derived(tmp_path):
    path = _copy(tmp_path)
    before = _counts(path)
    assert sqlite3.connect(path).execute("select version from schema_version").fetchone() == (1,)
    store = open_store(f"sqlite:///{path}", create=False)
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("select version from schema_version").fetchone() == (SCHEMA_VERSION,)
            columns = {
                table: {c["name"] for c in inspect(conn).get_columns(table)} for table in current.metadata.tables
            }
        # the migrated schema has every column of the current models
        for name, table in current.metadata.tables.items():
            assert {c.name for c in table.columns} == columns[name], name
        run_id = store.list_runs()[0]["id"]
        rows = read_run(store, run_id).outputs.values()
        assert all(r.retrieved_count == 3 and r.usage.calls == 0 and r.usage.cost_usd == 0.0 for r in rows)
        comparison = compare([read_run(store, run_id)])
        assert {row.system: row.retrievals for row in comparison.rows} == dict.fromkeys(
            ["keyword", "bm25", "dense", "hybrid"], 4
        )
        assert comparison.rows[0].cells["token_recall"].n == 4
    finally:
        store.close()
    assert _counts(path) == before  # nothing lost, nothing duplicated


def test_v1_keys_never_match_a_v2_run(tmp_path):
    path = _copy(tmp_path)
    open_store(f"sqlite:///{path}", create=False).close()
    con = sqlite3.connect(path)
    keys = {k for (k,) in con.execute("select distinct system_key from outputs")}
    metric_keys = {k for (k,) in con.execute("select distinct metric_key from metric_values")}
    assert keys and all(k.startswith("v1:") for k in keys) and all(k.startswith("v1:") for k in metric_keys)


def test_migrated_database_is_readable_through_the_cli(tmp_path):
    path = _copy(tmp_path)
    result = ragassay_cli("runs", "--db", str(path), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert '"samples": 4' in result.stdout


def test_a_fresh_database_and_a_migrated_one_have_the_same_schema(tmp_path):
    fresh = open_store(f"sqlite:///{tmp_path / 'fresh.db'}")
    migrated = open_store(f"sqlite:///{_copy(tmp_path)}", create=False)
    try:
        shapes = []
        for store in (fresh, migrated):
            with store.engine.connect() as conn:
                inspector = inspect(conn)
                shapes.append(
                    {
                        table: sorted(c["name"] for c in inspector.get_columns(table))
                        for table in inspector.get_table_names()
                    }
                )
        assert shapes[0] == shapes[1]
    finally:
        fresh.close()
        migrated.close()
