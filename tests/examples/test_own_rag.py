"""examples/own_rag (docs/own-rag.md): the python, precomputed and http adapters on the example's toy RAG."""

from __future__ import annotations

import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import ragassay

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own_rag"

HTTP_CONFIG = """
[project]
results = "ragassay-results.db"

[corpus]
paths = ["corpus/*.md"]

[dataset]
source = "files"
options = {{ path = "qa.jsonl" }}

[systems.mine_http.rag]
name = "http"

[systems.mine_http.rag.options]
url = "{url}/answer"
request = {{ question = "{{question}}" }}
response = {{ answer = "data.answer", contexts = "data.sources", context_text_field = "text", context_id_field = "id" }}
retries = 0

[evaluation]
metrics = ["token_recall", "context_mrr"]
"""


@pytest.fixture
def example(tmp_path, monkeypatch) -> Path:
    """A copy of the example (its results database stays out of the repository), importable as the docs use it."""
    folder = tmp_path / "own_rag"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("ragassay-results.db*", "*.toml.bak", "__pycache__"))
    monkeypatch.syspath_prepend(str(folder))
    for name in ("my_rag", "server"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return folder


def test_python_and_precomputed_systems_give_the_same_outputs(example):
    summary = ragassay.run(example)
    assert (summary.units, summary.failed, summary.warnings) == (18, 0, [])
    frames = ragassay.load_run(summary.run_id, config=example)
    outputs = frames.outputs
    for column in ("answer", "context_ids"):
        assert outputs.loc["mine"][column].tolist() == outputs.loc["mine_file"][column].tolist(), column
    # the toy RAG returns corpus ids, so every retrieval metric is scored (not unscored, not all zero)
    retrieval = frames.metrics[frames.metrics["metric"].isin(["context_mrr", "recall_at_k"])]
    assert retrieval["unscored_reason"].isna().all()
    assert retrieval.groupby("system")["value"].mean().loc[["mine", "mine_file"]].tolist() == [1.0, 1.0]


def test_http_endpoint_answers_like_the_callable_and_stops(example):
    import my_rag
    import server

    httpd, url = server.serve()
    try:
        (example / "http.toml").write_text(HTTP_CONFIG.format(url=url), encoding="utf-8")
        summary = ragassay.run(example / "http.toml")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert (summary.units, summary.failed) == (6, 0)
    frames = ragassay.load_run(summary.run_id, config=example / "http.toml")
    for question_id, question in frames.samples["question"].items():
        expected = my_rag.answer(question)
        output = frames.outputs.loc[("mine_http", question_id)]
        assert (output["answer"], list(output["context_ids"])) == (expected["answer"], expected["context_ids"])
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/answer", data=b"{}", timeout=2)


def test_answers_without_contexts_get_the_documented_warning(example):
    config = (example / "ragassay.toml").read_text(encoding="utf-8")
    (example / "bare.toml").write_text(config.replace('"my_rag:answer"', '"my_rag:answer_only"'), encoding="utf-8")
    summary = ragassay.run(example / "bare.toml")
    assert "mine: 6 output(s) came back with no retrieved context (check the retriever and the corpus)" in (
        summary.warnings
    )
    frames = ragassay.load_run(summary.run_id, config=example / "bare.toml")
    k_precision = frames.metrics[(frames.metrics["system"] == "mine") & (frames.metrics["metric"] == "k_precision")]
    assert set(k_precision["unscored_reason"]) == {"no retrieved contexts to be faithful to"}
