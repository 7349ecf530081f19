"""Sequential evaluation end to end on Aurp, through the real CLI, against a local chat-completions server that
counts the requests: two naive RAG systems (BM25, each answering through its own model name) and a correctness
judge whose "Correct" rate differs by system (deterministic per system and sample: a hash of the prompt).

The full run and the ``--sequential`` run reach the same verdict; the sequential one makes fewer calls and prints
the calls saved (exactly the full run's calls less its own here: every unit makes one answer and one judge
call). A replay of the full run's scores predicts the live run's decisions exactly, and a sequential run stopped
by a budget and resumed (at another concurrency) reaches the same decisions with no call made twice."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, ragassay_cli
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

AURP = REPO / "examples" / "aurp"
SAMPLES = 80
RATES = {"sys-a": 0.35, "sys-b": 0.9}  # "Correct" rates of the judge, per system

CONFIG = """
[project]
name = "aurp-sequential"
concurrency = {concurrency}

[dataset]
source = "grammar"
limit = {samples}

[dataset.options]
sql_dump = "aurp.sql"
templates = "templates.yaml"
documents = ["corpus/**/*.md"]

[llm]
cache = false

[defaults]
chunker = {{ name = "recursive", options = {{ size = 400, overlap = 0, title_prefix = true }} }}
retriever = "bm25"

[systems.a]
generator = {{ name = "openai", options = {{ model = "sys-a", base_url = "{url}/v1", backoff_s = 0.01 }} }}

[systems.b]
generator = {{ name = "openai", options = {{ model = "sys-b", base_url = "{url}/v1", backoff_s = 0.01 }} }}

[evaluation]
metrics = ["recall_at_k"]
judges = [{{ name = "correctness", options = {{ generator = {{ name = "openai", options = {{ model = "judge", base_url = "{url}/v1", backoff_s = 0.01 }} }} }} }}]
decide = ["judge:correctness"]
sequential = {{ batch = 10 }}
"""


def _reply(request) -> Turn:
    """Answers name their system; the judge says Correct at that system's rate (a hash of the prompt)."""
    body = request.json
    if not body.get("response_format"):
        return Turn(text=f"The answer of {body['model']}.", usage=(200, 5, 0))
    prompt = json.dumps(body["messages"], sort_keys=True)
    system = "sys-a" if "sys-a" in prompt else "sys-b"
    draw = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big") / 2**64
    judgement = "Correct" if draw < RATES[system] else "Incorrect"
    return Turn(text=json.dumps({"explanation": "Checked.", "judgement": judgement}), usage=(300, 10, 0))


def _write(root: Path, url: str, concurrency: int = 8) -> Path:
    """The config, next to a copy of the Aurp data (its document ids are paths relative to the config)."""
    if not root.exists():
        shutil.copytree(AURP / "corpus", root / "corpus")
        for name in ("aurp.sql", "templates.yaml"):
            shutil.copy(AURP / name, root / name)
    config = root / "ragassay.toml"
    config.write_text(CONFIG.format(url=url, samples=SAMPLES, concurrency=concurrency))
    return config


def _run(config: Path, **options):
    """``ragassay.run`` in this process (the CLI is exercised once, for what it prints)."""
    from ragassay.api import run

    return run(config, **options).summary


def _read(config: Path, run_id: str):
    from ragassay.config import load_config
    from ragassay.engine.project import Project
    from ragassay.results import read_run

    store = Project(load_config(config)).open_store()
    try:
        return read_run(store, run_id)
    finally:
        store.close()


def test_sequential_reaches_the_full_runs_verdict_with_fewer_calls_and_prints_the_saving(tmp_path, monkeypatch):
    from ragassay.analysis.comparison import compare

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sequential")
    with OpenAIChatServer(default=_reply) as server:
        config = _write(tmp_path / "p", server.url)
        full = _run(config, sequential=False)  # [evaluation] sequential switched off for this call
        full_calls = server.calls
        assert full_calls == SAMPLES * 2 * 2  # 2 systems x (1 answer + 1 judgement)

        sequential = ragassay_cli("run", str(config), "--sequential", "--new")
        assert sequential.returncode == 0, sequential.stderr
        calls = server.calls - full_calls
        assert 0 < calls < full_calls
        saved = re.search(r"saved against the full run \(projected[^)]*\): ([\d,]+) calls", sequential.stdout)
        assert saved is not None, sequential.stdout
        assert int(saved.group(1).replace(",", "")) == full_calls - calls
        assert "fixed-n verdicts are not shown for this run" in sequential.stdout
        sequential_id = re.search(r"run ([0-9a-f]{16}):", sequential.stderr).group(1)

        fixed = compare([_read(config, full.run_id)]).runs[0]
        assert fixed.sequential is None
        assert [(p.system, p.verdict) for p in fixed.verdicts.pairs if p.metric == "judge:correctness"] == [
            ("b", "better")
        ]
        live = compare([_read(config, sequential_id)]).runs[0].sequential
        assert [(r.system, r.decision) for r in live.rows] == [("b", "better")]
        assert live.stopped and live.rows[0].settled_at < SAMPLES and live.rows[0].ci_low > 0
        record = _read(config, sequential_id).info.spec["sequential"]["comparisons"]

        # the replay of the full run's scores predicts the live run exactly (one order, one check)
        assert _replayed(_read(config, full.run_id)) == record

    # stopped by a budget mid-way, then resumed at another concurrency: the same decisions, no call made twice
    # (a project of its own: nothing to reuse from the runs above)
    with OpenAIChatServer(default=_reply) as server:
        other = _write(tmp_path / "q", server.url)
        stopped = _run(other, sequential=True, budget={"calls": calls // 2})
        assert stopped.budget_limited and server.calls <= calls // 2
        _write(tmp_path / "q", server.url, concurrency=1)
        resumed = _run(other, sequential=True)
        assert resumed.run_id == stopped.run_id and server.calls == calls
        assert _read(other, resumed.run_id).info.spec["sequential"]["comparisons"] == record


def _replayed(run) -> list[dict]:
    """The full run replayed with the config's sequential settings and seed, as the run stores it."""
    from ragassay.analysis.sequential_replay import Comparison, replay
    from ragassay.config.sequential import SequentialSettings
    from ragassay.engine.sequential.plan import settled_json

    values = {s: {"judge:correctness": run.values(s, "judge:correctness")} for s in run.systems}
    family = [Comparison("b", "a", "judge:correctness", 0.0, 1.0)]
    result = replay(values, family, SequentialSettings(batch=10), seed=42, question_ids=run.question_ids)
    return [settled_json(s) for s in result.settled]


SMALL = """
[project]
name = "sequential-lookahead"
concurrency = 8

[corpus]
paths = ["corpus/*"]

[dataset]
options = {{ path = "qa.jsonl" }}

[llm]
cache = false

[systems.a]
retriever = "bm25"
generator = {{ name = "openai", options = {{ model = "sys-a", base_url = "{url}/v1", backoff_s = 0.01 }} }}

[systems.b]
retriever = "bm25"
generator = {{ name = "openai", options = {{ model = "sys-b", base_url = "{url}/v1", backoff_s = 0.01 }} }}

[evaluation]
judges = [{{ name = "correctness", options = {{ generator = {{ name = "openai", options = {{ model = "judge", base_url = "{url}/v1", backoff_s = 0.01 }} }} }} }}]
decide = ["judge:correctness"]
sequential = {{ batch = 10, lookahead = {lookahead} }}
"""


def _small(root: Path, url: str, lookahead: int, samples: int = 60) -> Path:
    (root / "corpus").mkdir(parents=True, exist_ok=True)
    (root / "corpus" / "doc.md").write_text("# Reactors\n\nReactor 1 was built by lab 3 in 1951.\n")
    qa = [
        {"question_id": f"q{i:03d}", "question": f"Who built reactor {i}?", "reference_answers": ["lab"]}
        for i in range(samples)
    ]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    config = root / "ragassay.toml"
    config.write_text(SMALL.format(url=url, lookahead=lookahead))
    return config


def test_a_system_settled_after_batch_k_is_processed_on_exactly_k_plus_lookahead_batches(tmp_path, monkeypatch):
    """The look-ahead changes the units processed by the documented rule and never the decisions (one
    comparison: both systems stop together), whatever the timing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-sequential")
    previous = None
    for lookahead in (0, 2):
        with OpenAIChatServer(default=_reply) as server:  # sys-a Correct at 0.35, sys-b at 0.9
            config = _small(tmp_path / f"p{lookahead}", server.url, lookahead)
            summary = _run(config, sequential=None)
            record = _read(config, summary.run_id).info.spec["sequential"]
            settled_at = record["comparisons"][0]["settled_at"]
            processed = min(settled_at + 10 * lookahead, 60)
            assert record["comparisons"][0]["decision"] == "better" and settled_at < 60
            assert record["checked"] == settled_at and record["judged"] == {"a": processed, "b": processed}
            assert server.calls == 2 * 2 * processed  # per system and sample: one answer, one judgement
            assert summary.completed == 2 * processed
        assert previous is None or record["comparisons"] == previous
        previous = record["comparisons"]
