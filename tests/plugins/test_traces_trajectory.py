"""Production traces of an agent become a run whose outputs carry trajectories: the hand-written GenAI and
OpenInference traces are imported (``ragassay traces import``), sampled by the ``traces`` source and replayed by
``trace_replay``; each stored output's trajectory reads back (``read_run`` with payloads) equal to the
hand-written one, the spans that are no step are counted, and the answer is scored."""

from __future__ import annotations

import json

import ragassay

from conftest import ragassay_cli
from otlp_traces import genai_trace, request, tid
from trace_runs import read
from trajectory_fixtures import (
    GENAI_SKIPPED,
    OPENINFERENCE_SKIPPED,
    genai_expected,
    genai_request,
    openinference_expected,
    openinference_request,
)

CONFIG = """
[dataset]
source = "traces"
[systems.prod]
rag = "trace_replay"
[evaluation]
metrics = ["answer_relevance_token_recall"]
"""


def _run(root):
    root.mkdir()
    (root / "ragassay.toml").write_text(CONFIG)
    requests = [genai_request(), openinference_request(), request(genai_trace(3, "Who?", "genai doc"))]
    (root / "traces.jsonl").write_text("".join(json.dumps(r) + "\n" for r in requests))
    imported = ragassay_cli("traces", "import", str(root / "traces.jsonl"), "--config", str(root / "ragassay.toml"))
    assert imported.returncode == 0, imported.stderr
    return read(root, ragassay.run(root).run_id, payloads=True)


def test_replayed_traces_store_their_trajectories(tmp_path):
    run = _run(tmp_path / "p")
    for n, expected, skipped in [
        (41, genai_expected, GENAI_SKIPPED),
        (42, openinference_expected, OPENINFERENCE_SKIPPED),
    ]:
        output = run.payload("prod", tid(n))
        assert output.trajectory == expected(), n
        assert output.trace["trajectory_skipped"] == skipped
    plain = run.payload("prod", tid(3))  # a plain RAG trace: its retrieval and model call, then the answer
    assert [(s.kind, s.context_ids) for s in plain.trajectory] == [
        ("retrieval", ["g1"]),
        ("model_call", []),
        ("answer", []),
    ]
    assert {o.status for o in run.outputs.values()} == {"ok"} and len(run.outputs) == 3
    recall = run.values("prod", "answer_relevance_token_recall")
    assert len(recall) == 3 and all(0.0 <= v <= 1.0 for v in recall)
