"""``ragassay.load_run``: a real project run in-process, read back as DataFrames and checked against the store."""

from __future__ import annotations

import json
import math
import sqlite3

import pandas as pd
import pytest

import ragassay
from ragassay.errors import ConfigError, StoreError
from ragassay.llm.pricing import PriceTable
from ragassay.models import MetricValue, TokenUsage
from ragassay.store import open_store
from ragassay.store.database import UnitResult, WriteContext

from conftest import QA, Testkit, write_project

CONFIG = """
    [project]
    concurrency = 3
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = { path = "qa.jsonl" }
    [systems.echo]
    rag = "testkit/echo"
    [systems.flaky]
    rag = { name = "testkit/echo", options = { fail_ids = ["q2"] } }
    [evaluation]
    metrics = ["token_recall", "exact_match", "testkit/explode"]
    judges = ["match"]
"""
METRICS = ["token_recall", "exact_match", "testkit/explode"]
ROWS = [
    {**QA[0], "metadata": {"category": "people", "source": {"page": 3}}, "group_id": "g1", "difficulty": "easy"},
    {**QA[1], "metadata": {"category": "places"}, "group_id": "g1"},
    {**QA[2], "is_answerable": False, "difficulty": "hard"},
]


def run_project(folder, **options):
    """Run the project in ``folder`` in-process (writing it first if needed); returns the run id."""
    if not (folder / "ragassay.toml").exists():
        write_project(folder, CONFIG, qa=ROWS)
    return ragassay.run(folder, plugins=[("testkit", Testkit())], **options).run_id


def open_db(folder):
    return open_store(f"sqlite:///{folder / 'ragassay-results.db'}", create=False)


def sql_rows(folder, query: str, *parameters) -> list[dict]:
    """The rows of a query on the project's results file, read with sqlite3 (an oracle apart from ragassay)."""
    con = sqlite3.connect(folder / "ragassay-results.db")
    try:
        con.row_factory = sqlite3.Row
        return [dict(row) for row in con.execute(query, parameters)]
    finally:
        con.close()


OUTPUT_ROWS = "select * from outputs where run_id = ?"
SCORE_ROWS = (
    "select o.system, o.question_id, s.* from {table} s join outputs o on o.id = s.output_id"
    " where o.run_id = ? and s.repeat = 0"
)


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """One run of the project, and its frames."""
    folder = tmp_path_factory.mktemp("frames")
    run_id = run_project(folder)
    return folder, run_id, ragassay.load_run(config=folder)


def same(a, b) -> bool:
    """Equal values, NaN and None being the same 'no value'."""
    missing = [v is None or (isinstance(v, float) and math.isnan(v)) for v in (a, b)]
    return all(missing) if any(missing) else a == b


def test_run_metadata(stored):
    folder, run_id, frames = stored
    run = frames.run
    assert run["id"] == run_id and run["state"] == "complete"
    assert (run["systems"], run["metrics"], run["judges"]) == (["echo", "flaky"], METRICS, ["match"])
    assert run["config_path"].endswith("ragassay.toml") and run["created"].tzinfo is not None
    assert isinstance(run["warnings"], list) and run["totals"]["calls"] == 0


def test_samples_frame_flattens_metadata_and_attributes(stored):
    samples = stored[2].samples
    assert samples.index.tolist() == ["q1", "q2", "q3"] and samples.index.name == "question_id"
    assert samples.loc["q1", "question"] == QA[0]["question"]
    assert samples.loc["q1", "reference_answers"] == ["Ada Lovelace Labs"]
    assert samples.loc["q2", "reference_context_ids"] == ["corpus/beta.md"]
    assert samples["is_answerable"].tolist() == [True, True, False]
    assert samples.loc["q1", "group_id"] == "g1" and pd.isna(samples.loc["q3", "group_id"])
    assert samples.loc["q1", "metadata.category"] == "people" and samples.loc["q1", "metadata.source.page"] == 3
    assert math.isnan(samples.loc["q2", "metadata.source.page"])
    assert samples["difficulty"].tolist()[::2] == ["easy", "hard"]


def test_outputs_frame_has_every_unit_with_failures_named(stored):
    folder, run_id, frames = stored
    outputs = frames.outputs
    assert outputs.index.names == ["system", "question_id"]
    assert outputs.index.tolist() == [(s, q) for s in ("echo", "flaky") for q in ("q1", "q2", "q3")]
    failed = outputs.loc[("flaky", "q2")]
    assert failed["status"] == "failed" and "scripted failure on q2" in failed["error"]
    ok = outputs.loc[("echo", "q1")]
    assert (ok["status"], ok["answer"], ok["context_count"]) == ("ok", "Ada Lovelace Labs", 1)
    assert ok["context_ids"] == ["corpus/alpha.md"] and bool(ok["retrieved"]) is True
    rows = {(r["system"], r["question_id"]): r for r in sql_rows(folder, OUTPUT_ROWS, run_id)}
    for key, row in rows.items():
        for column in ("status", "latency_s", "input_tokens", "output_tokens", "calls", "cost_usd", "error"):
            assert same(outputs.loc[key, column], row[column]), (key, column)


def test_metrics_frame_equals_the_store_with_unscored_as_nan(stored):
    folder, run_id, frames = stored
    metrics = frames.metrics
    rows = sql_rows(folder, SCORE_ROWS.format(table="metric_values"), run_id)
    assert len(metrics) == len(rows) == 5 * 3  # 5 ok outputs x 3 metrics; the failed one has none
    by_key = {(r["system"], r["question_id"], r["metric"]): r for r in rows}
    for record in metrics.to_dict("records"):
        row = by_key[(record["system"], record["question_id"], record["metric"])]
        assert same(record["value"], row["value"]) and same(record["unscored_reason"], row["unscored_reason"])
    explode = metrics[metrics["metric"] == "testkit/explode"]
    assert explode["value"].isna().all() and set(explode["unscored_reason"]) == {"error: ValueError: boom"}
    assert metrics["value"].dtype == float and (metrics["repeat"] == 0).all()
    # the run's order, whatever order the concurrent units were stored in
    expected = [(s, q, m) for s in ("echo", "flaky") for q in ("q1", "q2", "q3") for m in METRICS]
    assert list(zip(metrics["system"], metrics["question_id"], metrics["metric"])) == [
        key for key in expected if key[:2] != ("flaky", "q2")
    ]


def test_judgements_frame_equals_the_store(stored):
    folder, run_id, frames = stored
    judgements = frames.judgements
    rows = sql_rows(folder, SCORE_ROWS.format(table="judgements"), run_id)
    assert len(judgements) == len(rows) == 5
    by_key = {(r["system"], r["question_id"]): r for r in rows}
    for record in judgements.to_dict("records"):
        row = by_key[(record["system"], record["question_id"])]
        assert (record["judge"], record["verdict"], record["score"]) == ("match", row["verdict"], row["score"])
        assert record["explanation"] and record["judge_id"].startswith("match")


def test_costs_and_scores(stored):
    frames = stored[2]
    costs = frames.costs
    assert costs.index.tolist() == ["echo", "flaky"]
    assert costs.loc["flaky", ["samples", "outputs", "failed", "missing"]].tolist() == [3, 3, 1, 0]
    assert costs.loc["echo", "eval_calls"] == 0 and costs.loc["echo", "eval_cost_usd"] == 0.0
    scores = frames.scores()
    assert scores.columns.tolist() == METRICS + ["judge:match"]
    assert scores.index.equals(frames.outputs.index)
    assert scores.loc[("flaky", "q2")].isna().all()  # failed: no value at all
    assert scores["testkit/explode"].isna().all()
    for record in frames.metrics.to_dict("records"):
        assert same(scores.loc[(record["system"], record["question_id"]), record["metric"]], record["value"])
    assert scores["judge:match"].dropna().tolist() == frames.judgements["score"].tolist()


def test_repeats_and_the_evaluation_cost_of_values(tmp_path):
    run_id = run_project(tmp_path)
    store = open_db(tmp_path)
    try:
        output_id = next(
            r["id"]
            for r in sql_rows(tmp_path, OUTPUT_ROWS, run_id)
            if (r["system"], r["question_id"]) == ("echo", "q1")
        )
        priced = TokenUsage(
            input_tokens=1000,
            output_tokens=100,
            calls=1,
            by_model={"test/priced": TokenUsage(input_tokens=1000, output_tokens=100, calls=1)},
        )
        unpriced = TokenUsage(input_tokens=5, calls=1, by_model={"test/unknown": TokenUsage(input_tokens=5, calls=1)})
        values = [
            MetricValue(metric="token_recall", value=0.25, usage=priced, repeat=1),
            MetricValue(metric="exact_match", value=None, unscored_reason="error: scripted", usage=unpriced, repeat=1),
        ]
        prices = PriceTable({"test/priced": {"input_per_million": 1.0, "output_per_million": 2.0}})
        store.write_units(
            run_id, [UnitResult("echo", "q1", "ok", output_id=output_id, metrics=values)], WriteContext(prices)
        )
    finally:
        store.close()
    frames = ragassay.load_run(run_id, config=tmp_path)
    repeat = frames.metrics[frames.metrics["repeat"] == 1].set_index("metric")
    assert repeat.index.tolist() == ["token_recall", "exact_match"]
    assert repeat.loc["token_recall", "value"] == 0.25
    assert repeat.loc["token_recall", ["input_tokens", "output_tokens", "calls"]].tolist() == [1000, 100, 1]
    assert repeat.loc["token_recall", "cost_usd"] == pytest.approx(1000 / 1e6 * 1.0 + 100 / 1e6 * 2.0)
    assert math.isnan(repeat.loc["exact_match", "value"]) and repeat.loc["exact_match", "unscored_reason"]
    assert math.isnan(repeat.loc["exact_match", "cost_usd"]) and repeat.loc["exact_match", "unpriced"] == "test/unknown"
    assert frames.scores().loc[("echo", "q1"), "token_recall"] == 1.0  # repeat 0
    echo = frames.costs.loc["echo"]
    assert (echo["eval_calls"], echo["eval_input_tokens"]) == (2, 1005)
    assert math.isnan(echo["eval_cost_usd"]) and echo["eval_unpriced_models"] == "test/unknown"
    assert frames.run["totals"]["evaluation"]["cost_usd"] is None


def test_missing_outputs_are_rows_with_status_missing(tmp_path):
    run_id = run_project(tmp_path)
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    with con:  # what an interrupted run leaves: a unit never stored
        con.execute("PRAGMA foreign_keys=ON")
        con.execute("delete from outputs where system = 'echo' and question_id = 'q3'")
    con.close()
    frames = ragassay.load_run(config=tmp_path)
    assert frames.run["id"] == run_id and frames.run["state"].startswith("interrupted")
    missing = frames.outputs.loc[("echo", "q3")]
    assert missing["status"] == "missing" and pd.isna(missing["answer"])
    assert len(frames.outputs) == 6 and frames.costs.loc["echo", "missing"] == 1
    assert frames.scores().loc[("echo", "q3")].isna().all()


def test_newest_run_by_default_a_prefix_or_db_selects_another(tmp_path, monkeypatch):
    first = run_project(tmp_path)
    second = run_project(tmp_path, new=True)
    assert first != second
    assert ragassay.load_run(config=tmp_path).run["id"] == second
    assert ragassay.load_run(config=tmp_path / "ragassay.toml").run["id"] == second
    assert ragassay.load_run(first[:6], config=tmp_path).run["id"] == first
    monkeypatch.chdir(tmp_path)
    assert ragassay.load_run(first, db="ragassay-results.db").run["id"] == first
    with pytest.raises(StoreError, match=r"run 'zzz' not found\. Known runs: .*ragassay runs"):
        ragassay.load_run("zzz")
    with pytest.raises(StoreError, match="run '' is ambiguous"):
        ragassay.load_run("")
    with pytest.raises(ConfigError, match=r"'\.' is a project, not a run id; give it as ragassay.load_run\(config="):
        ragassay.load_run(".")


def test_errors_name_what_to_do(tmp_path):
    write_project(tmp_path, CONFIG, qa=ROWS)
    with pytest.raises(StoreError, match="no results database at .*Run 'ragassay run CONFIG' first"):
        ragassay.load_run(config=tmp_path)
    open_db_created = open_store(f"sqlite:///{tmp_path / 'ragassay-results.db'}")
    open_db_created.close()
    with pytest.raises(StoreError, match="has no run yet. Run 'ragassay run --config PROJECT' first"):
        ragassay.load_run(config=tmp_path)
    with pytest.raises(ConfigError, match="is a project, not a run id"):
        ragassay.load_run(str(tmp_path / "ragassay.toml"), config=tmp_path / "elsewhere")


def test_frames_are_the_same_in_a_fresh_process(stored):
    import subprocess
    import sys

    folder, run_id, frames = stored
    code = (
        "import json, sys, ragassay; f = ragassay.load_run(config=sys.argv[1]); "
        "print(json.dumps([f.metrics[['system', 'question_id', 'metric', 'value']].to_json(), "
        "f.outputs['status'].to_json(), f.scores().to_json()]))"
    )
    result = subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True)
    metrics = frames.metrics[["system", "question_id", "metric", "value"]].to_json()
    assert json.loads(result.stdout) == [metrics, frames.outputs["status"].to_json(), frames.scores().to_json()]
