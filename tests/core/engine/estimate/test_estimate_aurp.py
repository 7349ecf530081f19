"""``ragassay estimate`` against what a run really sends, on the Aurp example (examples/aurp: GRAMMAR samples from
a relational database, offline keyword and BM25 systems) judged by ``correctness`` at a scripted local
OpenAI-compatible judge whose verdicts differ by system.

The server counts the calls it receives and the prompt tokens of each, by its own rule: characters / 4 (rounded up)
of every message's content plus the JSON schema of ``response_format``, i.e. of the bytes that actually arrived
(the estimate reconstructs them from the prompt templates, the data and its assumptions; a different tokenizer
is not what this test measures). It reports them in ``usage``. The estimate must predict the calls exactly
(no corrective re-ask happens, so the run makes the range's low end) and the prompt tokens within 10%.
"""

from __future__ import annotations

import json
import math
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest

from tests.conftest import cli_env, ragassay_cli
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

AURP = Path(__file__).resolve().parents[4] / "examples" / "aurp"

CONFIG = """
[project]
name = "aurp-estimate"
concurrency = 8

[dataset]
source = "grammar"
options = {{ sql_dump = "aurp.sql", templates = "templates.yaml", documents = ["corpus/**/*.md"] }}

[llm]
cache = false

[defaults]
chunker = {{ name = "recursive", options = {{ size = 400, overlap = 0, title_prefix = true }} }}

[systems.keyword]
retriever = "keyword"
generator = "extractive"
options = {{ top_k = 3 }}

[systems.bm25]
extends = "keyword"
retriever = "bm25"

[evaluation]
metrics = ["exact_match"]

[[evaluation.judges]]
name = "correctness"
options.generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", backoff_s = 0.01 }} }}
"""


class CountingJudge:
    """Judges "Correct" when the given response shares a word with the true answer (so the systems differ);
    counts prompt tokens as characters / 4 of what arrived."""

    def __init__(self) -> None:
        self.prompt_tokens = 0
        self.lock = threading.Lock()

    def __call__(self, request) -> Turn:
        body = request.json
        chars = sum(len(str(m.get("content") or "")) for m in body["messages"])
        schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema")
        chars += len(json.dumps(schema)) if schema else 0
        tokens = math.ceil(chars / 4)
        with self.lock:
            self.prompt_tokens += tokens
        prompt = body["messages"][-1]["content"]
        truth = prompt.split("##True Answer##:")[1].split("##Given Response##:")[0].lower().split()
        given = prompt.split("##Given Response##:")[1].split("##Judgement##:")[0].lower()
        verdict = "Correct" if any(word in given for word in truth) else "Incorrect"
        return Turn(text=json.dumps({"explanation": "Compared.", "judgement": verdict}), usage=(tokens, 8, 0))


def test_estimate_predicts_the_calls_exactly_and_the_tokens_within_10_percent(tmp_path: Path):
    project = tmp_path / "aurp"
    shutil.copytree(AURP / "corpus", project / "corpus")
    for name in ("aurp.sql", "templates.yaml"):
        shutil.copy(AURP / name, project / name)
    judge = CountingJudge()
    env = {**cli_env(), "OPENAI_API_KEY": "sk-test-aurp"}
    with OpenAIChatServer(default=judge) as server:
        (project / "ragassay.toml").write_text(CONFIG.format(url=server.url))
        estimated = ragassay_cli("estimate", str(project), "--format", "json", env=env)
        assert estimated.returncode == 0, estimated.stderr
        assert server.calls == 0
        rows = json.loads(estimated.stdout)
        run = ragassay_cli("run", str(project), env=env)
        assert run.returncode == 0, run.stderr
    judged = [r for r in rows if r["component"] == "judge:correctness"]
    assert len(judged) == 2 and all(r["calls_high"] == 3 * r["calls_low"] for r in judged)
    assert server.calls == sum(r["calls_low"] for r in rows) > 0
    predicted = sum(r["input_tokens"] for r in rows)
    assert abs(predicted - judge.prompt_tokens) <= 0.10 * judge.prompt_tokens, (predicted, judge.prompt_tokens)
    assert "estimate (before any call" in run.stderr and f"keyword: {judged[0]['calls_low']}-" in run.stderr
    db = sqlite3.connect(project / "ragassay-results.db")
    rates = dict(
        db.execute(
            "SELECT o.system, avg(j.score) FROM judgements j JOIN outputs o ON o.id = j.output_id GROUP BY o.system"
        ).fetchall()
    )
    db.close()
    assert rates["keyword"] != rates["bm25"]  # the scripted judge's rates differ by system
