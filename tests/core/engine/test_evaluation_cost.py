"""The evaluation's own cost: model calls made by LLM metrics and judges are recorded per unit and shown beside
the systems' own cost. The models are a local server speaking the OpenAI protocol, driven by the real client."""

from __future__ import annotations

import sqlite3

import pytest

from tests.conftest import ragassay_cli, write_project
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

CONFIG = """
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    [systems.bm25]
    retriever = "bm25"
    generator = "extractive"
    [evaluation]
    metrics = ["exact_match", {{ name = "truthfulness", options = {{ generator = {gen} }} }}]
    judges = [{{ name = "grammar_llm", options = {{ generator = {gen} }} }}]
"""


def _reply(request):
    if request.json.get("tools"):
        return Turn(
            text=None,
            tool_calls=[("set_answer_evaluation", {"explanation": "ok", "truthfulness": 4, "relevance": 5})],
            usage=(300, 10, 0),
        )
    return Turn(text="The answer is correct.", usage=(200, 5, 0))


def test_judge_and_metric_calls_are_the_evaluation_cost(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-eval")
    with OpenAIChatServer() as server:
        server.default = _reply
        gen = (
            f'{{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{server.url}/v1", '
            'structured_mode = "tool" } }'
        )
        path = write_project(tmp_path, CONFIG.format(gen=gen))
        result = ragassay_cli("run", "--config", str(path), env={"OPENAI_API_KEY": "sk-test-eval"})
        assert result.returncode == 0, result.stderr
        assert server.calls == 6  # 3 samples x (one truthfulness call + one judge call)
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    metric = con.execute(
        "select sum(calls), sum(input_tokens), sum(output_tokens), sum(cost_usd) from "
        "metric_values where metric = 'truthfulness'"
    ).fetchone()
    judge = con.execute("select sum(calls), sum(input_tokens), sum(output_tokens) from judgements").fetchone()
    system = con.execute("select sum(calls), sum(input_tokens) from outputs").fetchone()
    assert metric[:3] == (3, 900, 30) and judge == (3, 600, 15) and system == (0, 0)
    # gpt-4o-mini list price: (900 x 0.15 + 30 x 0.60) / 1e6
    assert metric[3] == pytest.approx((900 * 0.15 + 30 * 0.60) / 1e6)
    assert con.execute("select count(*) from metric_values where metric = 'exact_match' and calls > 0").fetchone() == (
        0,
    )
    flat = " ".join(result.stdout.split())
    assert "evaluation cost" in flat and "1500 input and 45 output tokens, 6 model calls" in flat
    rows = {line.split("│")[1].strip(): line for line in result.stdout.splitlines() if line.count("│") > 3}
    assert "bm25" in rows
