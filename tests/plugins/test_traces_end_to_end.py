"""End to end (issue 26): a small RAG app instrumented with the real OpenTelemetry SDK and the
``openinference-instrumentation-openai`` instrumentor (its OpenAI calls go to a loopback OpenAI-compatible
server) exports its spans both to a file (the Collector file exporter's protobuf layout) and to
``ragassay traces receive``; the file is imported into one project, the received traces land in another, and
``ragassay run`` scores both the same way, linked to the real trace and span ids; ``ragassay traces export-evals``
sends the evaluations to a second loopback OTLP receiver, where they parse with the official proto package and sit
on the instrumentor's LLM spans."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys

import pytest

from conftest import cli_env, ragassay_cli
from servers.openai_chat import OpenAIChatServer, Turn
from servers.otlp_logs import OTLPLogsReceiver, attributes

CORPUS = {
    "paris": "Paris is the capital of France.",
    "rome": "Rome is the capital of Italy.",
    "bern": "Bern is the federal city of Switzerland.",
}
QUESTIONS = ["What is the capital of France?", "What is the capital of Italy?", "Which city is federal?"]
CONFIG = """
[dataset]
source = "traces"
[systems.prod]
rag = "trace_replay"
[evaluation]
metrics = ["k_precision", "answer_relevance_token_recall"]
"""


class FileSpanExporter:
    """Writes each exported batch as a length-prefixed ExportTraceServiceRequest (the Collector's file layout)."""

    def __init__(self, path):
        self.path = path

    def export(self, spans):
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        from opentelemetry.sdk.trace.export import SpanExportResult

        data = encode_spans(spans).SerializeToString()
        with open(self.path, "ab") as handle:
            handle.write(len(data).to_bytes(4, "big") + data)
        return SpanExportResult.SUCCESS

    def shutdown(self):
        pass

    def force_flush(self, timeout_millis=30_000):
        return True


def run_app(chat_url: str, receiver_url: str, file_path) -> None:
    """The instrumented app: a CHAIN root, a RETRIEVER span, the instrumented OpenAI call."""
    from openai import OpenAI
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource({"service.name": "demo-rag", "service.version": "1.0"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(file_path)))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=receiver_url, timeout=30)))
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("demo-rag")
        client = OpenAI(base_url=chat_url + "/v1", api_key="test", max_retries=0)
        for question in QUESTIONS:
            with tracer.start_as_current_span("rag.ask") as root:
                root.set_attributes({"openinference.span.kind": "CHAIN", "input.value": question})
                with tracer.start_as_current_span("retrieve") as retrieve:
                    words = set(question.lower().strip("?").split())
                    ranked = sorted(CORPUS, key=lambda d: -len(words & set(CORPUS[d].lower().strip(".").split())))
                    retrieve.set_attribute("openinference.span.kind", "RETRIEVER")
                    for i, doc in enumerate(ranked[:2]):
                        retrieve.set_attribute(f"retrieval.documents.{i}.document.id", doc)
                        retrieve.set_attribute(f"retrieval.documents.{i}.document.content", CORPUS[doc])
                        retrieve.set_attribute(f"retrieval.documents.{i}.document.score", float(2 - i))
                context = CORPUS[ranked[0]]
                reply = client.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[{"role": "system", "content": context}, {"role": "user", "content": question}],
                )
                root.set_attribute("output.value", reply.choices[0].message.content)
    finally:
        instrumentor.uninstrument()
        provider.shutdown()


def _project(root):
    root.mkdir()
    (root / "ragassay.toml").write_text(CONFIG)
    return root


def _outputs(root):
    con = sqlite3.connect(root / "ragassay-results.db")
    try:
        rows = con.execute(
            "select o.question_id, o.answer, o.output_json, m.value from outputs o join metric_values m "
            "on m.output_id = o.id where m.metric = 'k_precision' order by 1"
        ).fetchall()
    finally:
        con.close()
    return [(qid, answer, json.loads(raw)["trace"], value) for qid, answer, raw, value in rows]


@pytest.mark.slow
def test_instrumented_app_to_file_and_receiver_then_import_and_run(tmp_path):
    file_project, received_project = _project(tmp_path / "from_file"), _project(tmp_path / "received")
    receiver = subprocess.Popen(
        [sys.executable, "-m", "ragassay", "traces", "receive", "--config", str(received_project), "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    try:
        line = receiver.stderr.readline()
        assert "receiving OTLP traces on" in line, line
        answer = lambda request: Turn(text=request.json["messages"][0]["content"])  # noqa: E731 - answer from context
        with OpenAIChatServer(default=answer) as chat:
            run_app(chat.url, line.split(" on ")[1].split()[0], tmp_path / "spans.pb")
        receiver.send_signal(signal.SIGINT)
        stopped = receiver.communicate(timeout=60)[1]
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    assert receiver.returncode == 0 and "9 span(s) stored, 0 rejected" in stopped, stopped

    imported = ragassay_cli("traces", "import", str(tmp_path / "spans.pb"), "--config", str(file_project))
    assert imported.returncode == 0, imported.stderr
    assert "3 new trace(s)" in imported.stdout and "3 trace(s) map" in imported.stdout
    for project in (file_project, received_project):
        result = ragassay_cli("run", str(project), "-q")
        assert result.returncode == 0, result.stderr

    from_file, received = _outputs(file_project), _outputs(received_project)
    assert from_file == received and len(from_file) == 3
    for trace_id, answer, trace, value in from_file:
        assert trace["trace_id"] == trace_id and len(trace_id) == 32
        assert answer in CORPUS.values() and value == 1.0  # the model answered with the top context
        spans = {s["span_id"]: s for s in trace["spans"]}
        llm = spans[trace["answer_span_id"]]
        # the instrumentor's own span, a child of the root: model, tokens and messages as it recorded them
        assert llm["kind"] == "LLM" and llm["parent_span_id"] == trace["span_id"]
        assert llm["attributes"]["llm.model_name"] and "llm.token_count.prompt" in llm["attributes"]
        assert trace["service_name"] == "demo-rag" and trace["service_version"] == "1.0"

    run_id = _run_id(received_project)
    with OTLPLogsReceiver() as evaluations:
        exported = ragassay_cli(
            "traces", "export-evals", run_id, "--otlp", evaluations.url, "--config", str(received_project)
        )
        records = evaluations.log_records()
    assert exported.returncode == 0, exported.stderr
    assert len(records) == 3 * 2  # (trace, metric)
    answer_spans = {trace["trace_id"]: trace["answer_span_id"] for _, _, trace, _ in received}
    for _, record in records:
        assert record.event_name == "gen_ai.evaluation.result"
        assert answer_spans[record.trace_id.hex()] == record.span_id.hex()  # on the instrumentor's LLM span
        values = attributes(record)
        assert values["ragassay.run.id"] == run_id and values["gen_ai.evaluation.name"] in (
            "k_precision",
            "answer_relevance_token_recall",
        )
    k_precision = [attributes(r) for _, r in records if attributes(r)["gen_ai.evaluation.name"] == "k_precision"]
    assert [v["gen_ai.evaluation.score.value"] for v in k_precision] == [1.0, 1.0, 1.0]


def _run_id(root) -> str:
    con = sqlite3.connect(root / "ragassay-results.db")
    try:
        (run_id,) = con.execute("select id from runs").fetchone()
    finally:
        con.close()
    return run_id
