"""Store v2 -> v3: ``repeat`` joins the primary key of metric_values and judgements (tables recreated with a
copy); every v2 row is kept as repeat 0 and reads exactly as before."""

from __future__ import annotations

import sqlite3

from sqlalchemy import create_engine, inspect, text

from ragassay.results import read_run
from ragassay.store import SCHEMA_VERSION, open_store
from ragassay.store import schema as current
from ragassay.store.migrations import migrate


def _v2_database(path) -> None:
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        assert migrate(conn, 2) == [1, 2]
        conn.execute(
            text(
                "insert into runs (id, fingerprint, project, config_path, config_json, spec_json, ragassay_version, "
                "status, sample_count, created_at, updated_at) values ('r1', 'f', 'p', 'c', '{}', '{}', '0.1.0', "
                "'complete', 1, 1, 1)"
            )
        )
        conn.execute(
            text(
                "insert into outputs (id, run_id, system, question_id, status, answer, created_at, input_tokens, output_tokens) "
                "values (1, 'r1', 's', 'q', 'ok', 'a', 1, 0, 0)"
            )
        )
        conn.execute(
            text(
                "insert into metric_values (output_id, metric, value, metric_key, calls, cost_usd) "
                "values (1, 'truthfulness', 4.0, 'k', 1, 0.5)"
            )
        )
        conn.execute(
            text("insert into judgements (output_id, judge, verdict, score, calls) values (1, 'j', 'correct', 1.0, 1)")
        )
    engine.dispose()


def test_v2_rows_become_repeat_zero_and_repeat_is_part_of_the_key(tmp_path):
    path = tmp_path / "results.db"
    _v2_database(path)
    store = open_store(f"sqlite:///{path}", create=False)
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("select version from schema_version").fetchone() == (SCHEMA_VERSION,)
            for name in ("metric_values", "judgements"):
                table = current.metadata.tables[name]
                columns = {c["name"] for c in inspect(conn).get_columns(name)}
                assert columns == {c.name for c in table.columns}
                key = inspect(conn).get_pk_constraint(name)["constrained_columns"]
                assert key == [c.name for c in table.primary_key.columns]
                assert "repeat" in key
        run = read_run(store, "r1")
        values = [(r.system, r.question_id, r.label, r.value, r.unscored_reason) for r in run.records(kind="metric")]
        assert values == [("s", "q", "truthfulness", 4.0, None)]
        assert [(r.repeat, r.verdict) for r in run.records(kind="judge")] == [(0, "correct")]
        assert store.stored_units("r1")[("s", "q")].calling == {"truthfulness", "judge:j"}
        assert sum(usage.calls for usage in run.evaluation_usages("s")) == 2
    finally:
        store.close()
    con = sqlite3.connect(path)
    row = con.execute("select repeat, value, metric_key, calls, cost_usd from metric_values").fetchone()
    assert row == (0, 4.0, "k", 1, 0.5)
    con.execute("insert into metric_values (output_id, metric, repeat, value) values (1, 'truthfulness', 1, 5.0)")
    con.commit()  # a second repeat of the same (output, metric) fits the new key
    assert con.execute("select count(*) from metric_values").fetchone() == (2,)
