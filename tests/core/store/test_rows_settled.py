"""Unit results settled into rows before their batch is written (core/store/rows.py ``settled``, the store's
``settle_units``, what a run buffers): the same rows as the results themselves, on SQLite and PostgreSQL, for every
kind of result (fresh, failed, replacing a failure, values added to a stored output), and a settled batch written
again is stored once."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from ragassay.llm.pricing import PriceTable
from ragassay.models import Judgement, MetricValue, RAGOutput, Step, TokenUsage
from ragassay.store import open_store, store_url
from ragassay.store.protocols import SettlingWriter
from ragassay.store.units import UnitResult, WriteContext

from written_runs import empty_run

QUESTIONS = ("a", "b", "c")
CONTEXT = WriteContext(PriceTable(), metric_keys={"m1": "key-m1"}, judge_keys={"j": "key-j"})


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    url = store_url("results.db", tmp_path) if request.param == "sqlite" else request.getfixturevalue("postgres_url")
    opened = open_store(url)
    yield opened
    opened.close()


def make_run(store, run_id: str) -> None:
    empty_run(store, run_id, ("s1", "s2"), QUESTIONS)


def output(qid: str) -> RAGOutput:
    """An agent's output: contexts by id, usage by model, a trajectory."""
    steps = [
        Step(id="s1", kind="retrieval", query=qid, context_ids=[f"d{qid}#0"], document_ids=[f"d{qid}"]),
        Step(id="s2", kind="model_call", name="m", usage=TokenUsage(input_tokens=10, output_tokens=2, calls=1)),
        Step(id="s3", kind="answer", output=f"answer {qid}"),
    ]
    usage = TokenUsage(
        input_tokens=30,
        output_tokens=5,
        calls=2,
        by_model={"gpt-4o-mini": TokenUsage(input_tokens=30, output_tokens=5, calls=2)},
    )
    return RAGOutput(
        answer=f"answer {qid}",
        contexts=[f"text of {qid}", "shared text"],
        context_ids=[f"d{qid}#0", "shared#0"],
        retrieved=True,
        usage=usage,
        latency_s=0.25,
        trajectory=steps,
    )


def values(qid: str) -> list[MetricValue]:
    judged = TokenUsage(
        input_tokens=7,
        output_tokens=1,
        calls=1,
        by_model={"gpt-4o-mini": TokenUsage(input_tokens=7, output_tokens=1, calls=1)},
    )
    return [
        MetricValue(metric="m1", value=0.5, details={"unit": qid, "rows": [{"b": 1, "a": [1.5, None]}]}),
        MetricValue(metric="m2", value=None, unscored_reason="no reference"),
        MetricValue(metric="m3", value=1.0, usage=judged, repeat=1),
    ]


def batch(store, run_id: str) -> list[UnitResult]:
    """Every kind of result, after storing what it builds on (a failure to replace, an output to add to)."""
    store.write_units(
        run_id, [UnitResult("s1", "b", "failed", error="RuntimeError: x"), UnitResult("s1", "c", "ok", output("c"))]
    )
    stored = store.stored_units(run_id)
    verdict = Judgement(judge="j", verdict="correct", score=1.0, explanation="same", details={"raw": "Correct"})
    return [
        UnitResult(
            "s1", "a", "ok", output("a"), metrics=values("a"), judgements=[verdict], system_key="k", sample_key="q"
        ),
        UnitResult("s2", "a", "failed", error="TimeoutError: slow"),
        UnitResult("s1", "b", "ok", output("b"), metrics=values("b"), replaces=stored[("s1", "b")].output_id),
        UnitResult("s1", "c", "ok", metrics=values("c"), output_id=stored[("s1", "c")].output_id),
    ]


def dump(store, run_id: str) -> dict[str, list]:
    """Every row of the run, by unit, without ids and times."""
    queries = {
        "outputs": "SELECT system, question_id, status, error, answer, output_json, latency_s, input_tokens, "
        "output_tokens, calls, cached_tokens, cache_hits, cost_usd, unpriced, retrieved, retrieved_count, "
        "system_key, sample_key, reused_from FROM outputs WHERE run_id = :r",
        "metric_values": "SELECT o.system, o.question_id, v.metric, v.repeat, v.value, v.unscored_reason, "
        "v.details_json, v.metric_key, v.input_tokens, v.output_tokens, v.calls, v.cached_tokens, v.cache_hits, "
        "v.cost_usd, v.unpriced FROM metric_values v JOIN outputs o ON o.id = v.output_id WHERE o.run_id = :r",
        "judgements": "SELECT o.system, o.question_id, j.judge, j.repeat, j.verdict, j.score, j.explanation, "
        "j.judge_id, j.details_json, j.judge_key, j.input_tokens, j.calls, j.cost_usd FROM judgements j "
        "JOIN outputs o ON o.id = j.output_id WHERE o.run_id = :r",
    }
    with store.engine.connect() as conn:
        rows = {name: sorted(map(tuple, conn.execute(text(sql), {"r": run_id}))) for name, sql in queries.items()}
        rows["context_texts"] = sorted(map(tuple, conn.execute(text("SELECT key, text FROM context_texts"))))
    return rows


def test_a_settled_batch_stores_the_rows_of_its_results(store):
    assert isinstance(store, SettlingWriter)
    for run_id in ("as_results", "settled"):
        make_run(store, run_id)
    store.write_units("settled", store.settle_units(batch(store, "settled"), CONTEXT), CONTEXT)
    # written first: the context texts it refers to are those it stored itself
    assert store.load_output(store.stored_units("settled")[("s1", "a")].output_id) == output("a")
    store.write_units("as_results", batch(store, "as_results"), CONTEXT)
    as_results, settled = dump(store, "as_results"), dump(store, "settled")
    assert settled == as_results
    assert [len(as_results[t]) for t in ("outputs", "metric_values", "judgements")] == [4, 9, 1]


def test_settling_makes_new_results_and_leaves_the_given_ones_as_they_were(store):
    make_run(store, "r1")
    given = batch(store, "r1")
    settled = store.settle_units(given, CONTEXT)
    assert [r.output for r in given] == [output("a"), None, output("b"), None]
    assert [len(r.metrics) for r in given] == [3, 0, 3, 3] and given[0].judgements
    assert all(r.output is None and not r.metrics and not r.judgements and r.rows for r in settled)
    assert [(r.system, r.question_id, r.replaces, r.output_id) for r in settled] == [
        (r.system, r.question_id, r.replaces, r.output_id) for r in given
    ]


def test_a_settled_batch_written_again_is_stored_once(store):
    for run_id in ("once", "twice"):
        make_run(store, run_id)
    store.write_units("once", store.settle_units(batch(store, "once"), CONTEXT), CONTEXT)
    again = store.settle_units(batch(store, "twice"), CONTEXT)
    store.write_units("twice", again, CONTEXT, replace_existing=True)
    store.write_units("twice", again, CONTEXT, replace_existing=True)  # a retry, a unit redone elsewhere
    assert dump(store, "twice") == dump(store, "once")
