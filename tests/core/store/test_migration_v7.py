"""Store v6 -> v7: ``reasoning_tokens`` on outputs, metric values and judgements (0 for rows stored before); a
judgement's and a metric value's reasoning tokens round-trip through the store and the read model, and the
evaluation cost of a system sums them apart from the other output tokens."""

from __future__ import annotations

from sqlalchemy import create_engine, inspect

from ragassay.analysis.usage import system_usage
from ragassay.models import Judgement, MetricValue, RAGOutput, TokenUsage
from ragassay.results import read_run
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.database import UnitResult
from ragassay.store.migrations import migrate

from written_runs import empty_run


def _usage(reasoning: int) -> TokenUsage:
    counts = {"input_tokens": 100, "output_tokens": 80, "reasoning_tokens": reasoning, "calls": 1}
    return TokenUsage(**counts, by_model={"openai/o3-mini": TokenUsage(**counts)})


def test_a_v6_store_gains_the_column_and_reasoning_tokens_round_trip(tmp_path):
    url = store_url("results.db", tmp_path)
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrate(conn, 6)[-1] == 6
        assert "reasoning_tokens" not in {c["name"] for c in inspect(conn).get_columns("judgements")}
    engine.dispose()
    store = open_store(url)
    assert SCHEMA_VERSION >= 7
    with store.engine.connect() as conn:
        for table in ("outputs", "metric_values", "judgements"):
            assert "reasoning_tokens" in {c["name"] for c in inspect(conn).get_columns(table)}
    empty_run(store, "r1")
    unit = UnitResult(
        "sys",
        "a",
        "ok",
        RAGOutput(answer="yes", usage=_usage(7)),
        metrics=[MetricValue(metric="m", value=0.5, usage=_usage(20))],
        judgements=[Judgement(judge="j", verdict="correct", score=1.0, usage=_usage(64))],
    )
    store.write_units("r1", [unit])
    run = read_run(store, "r1")
    (judged,) = run.records(kind="judge")
    (metric,) = run.records(kind="metric")
    assert (judged.usage.output_tokens, judged.usage.reasoning_tokens) == (80, 64)
    assert metric.usage.reasoning_tokens == 20
    assert system_usage(run, "sys").evaluation.reasoning_tokens == 84
    stored = store.stored_units("r1")[("sys", "a")]
    (model,) = store.judgement_models(stored.output_id)
    assert model.usage.reasoning_tokens == 64
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("select reasoning_tokens from outputs").all() == [(7,)]
    store.close()


def test_migrating_twice_changes_nothing(tmp_path):
    url = store_url("results.db", tmp_path)
    open_store(url).close()
    engine = create_engine(url)
    with engine.begin() as conn:
        from ragassay.store.migrations import _v7_reasoning_tokens

        _v7_reasoning_tokens(conn)  # idempotent: the columns are there already
        assert [c["name"] for c in inspect(conn).get_columns("judgements")].count("reasoning_tokens") == 1
    engine.dispose()
