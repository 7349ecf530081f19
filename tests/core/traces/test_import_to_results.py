"""Through the real import path: OTLP JSON written from the specs -> ``ragassay traces import`` -> ``ragassay run``
(traces source, trace_replay) -> trend, export-evals (loopback OTLP receiver) and testset."""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

import ragassay
from ragassay.cli.main import cli
from ragassay.traces import read_traces

from otlp_traces import genai_trace, openinference_trace, request
from servers.otlp_logs import OTLPLogsReceiver, attributes

DAY_MS = 86_400_000
CONFIG = """
[dataset]
source = "traces"
[systems.prod]
rag = "trace_replay"
[evaluation]
metrics = ["k_precision", "answer_relevance_token_recall"]
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    folder = tmp_path_factory.mktemp("from-import")
    spans = []
    for n in range(1, 7):  # three traces on each of two days; the same question asked on both days
        question = f"Which river flows through city {n % 3}?"
        spans += openinference_trace(n, question, f"The river of city {n % 3}.", start=(n > 3) * DAY_MS + n)
    spans += genai_trace(7, "Which river flows through city 1?", "A river.", start=DAY_MS + 9)
    (folder / "traces.json").write_text(json.dumps(request(spans)))
    (folder / "ragassay.toml").write_text(textwrap.dedent(CONFIG))
    imported = CliRunner().invoke(cli, ["traces", "import", str(folder / "traces.json"), "-c", str(folder)])
    assert imported.exit_code == 0, imported.output
    run_id = ragassay.run(folder).run_id
    return folder, run_id, {t.trace_id: t for t in read_traces(folder)}


def invoke(folder, *args):
    return CliRunner().invoke(cli, ["traces", *args, "-c", str(folder)], env={"COLUMNS": "80"})


def test_evaluations_land_on_the_answer_span_of_each_imported_trace(project):
    folder, run_id, traces = project
    with OTLPLogsReceiver() as receiver:
        result = invoke(folder, "export-evals", run_id, "--otlp", receiver.url)
        records = receiver.log_records()
    assert result.exit_code == 0, result.output
    assert len(traces) == 7 and len(records) == 7 * 2
    for _, record in records:
        trace = traces[record.trace_id.hex()]
        assert record.span_id.hex() == trace.answer_span_id != trace.root_span_id
        assert attributes(record)["ragassay.run.id"] == run_id


def test_trend_has_a_window_per_day_and_testset_folds_the_repeated_questions(project, tmp_path):
    folder, run_id, _ = project
    data = json.loads(invoke(folder, "trend", run_id, "--format", "json").output)
    assert [w["window"] for w in data["windows"] if w["metric"] == "k_precision"] == ["2025-01-01", "2025-01-02"]
    assert [w["n"] for w in data["windows"] if w["metric"] == "k_precision"] == [3, 4]
    out = tmp_path / "regression.jsonl"
    assert invoke(folder, "testset", run_id, "--out", str(out)).exit_code == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3  # three distinct questions
    city_1 = next(r for r in records if "city 1" in r["question"])
    assert len(city_1["metadata"]["trace_ids"]) == 3 and "A river." in city_1["reference_answers"]
