"""``ragassay estimate --pilot N`` against a scripted local server: the pilot runs the first N samples of the
seeded order for real (the server counts its calls), in a throwaway database (the project's is not created),
measures the fact-checks per answer of ``citation_groundedness`` (one per answer segment: a range before the
pilot) and scales them to the samples the cache does not answer; the run then makes exactly that."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from tests.conftest import ragassay_cli, write_project
from tests.servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

SAMPLES, PILOT, SEGMENTS = 12, 4, 3

CONFIG = """
    [project]
    name = "pilot"
    concurrency = 4

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    retriever = "bm25"

    [systems.a]
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", backoff_s = 0.01 }} }}
    options = {{ top_k = 2 }}

    [evaluation]
    seed = 7
    metrics = [{{ name = "citation_groundedness", options = {{ generator = {{ name = "openai", options = {{ model = "gpt-4o", base_url = "{url}/v1", backoff_s = 0.01 }} }} }} }}]
"""

QA = [
    {"question_id": f"q{i:02d}", "question": f"Who built reactor {i}?", "reference_answers": ["Ada Lovelace Labs"]}
    for i in range(SAMPLES)
]


def _reply(request) -> Turn:
    """Fact-checks (structured output) say correct; answers have three cited sentences (three segments), each
    naming the question's reactor (so no two fact-checks are the same request)."""
    if request.json.get("response_format"):
        return Turn(text=json.dumps({"explanation": "Backed up.", "correct": True}))
    n = re.search(r"reactor (\d+)", json.dumps(request.json["messages"])).group(1)
    return Turn(
        text=f"Ada Lovelace Labs built reactor {n} [1]. Reactor {n} opened in 1999 [1]. It makes steam {n} [1]."
    )


def test_pilot_measures_segments_scales_them_and_leaves_its_replies_in_the_cache(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-pilot")
    with OpenAIChatServer(default=_reply) as server:
        config = write_project(tmp_path / "p", CONFIG.format(url=server.url), qa=QA)
        result = CliRunner().invoke(cli, ["estimate", str(config), "--format", "json", "--pilot", str(PILOT)])
        assert result.exit_code == 0, result.output
        piloted = server.calls
        assert piloted == PILOT * (1 + SEGMENTS)
        assert not (config.parent / "ragassay-results.db").exists()  # the pilot's database was a throwaway
        run = ragassay_cli("run", str(config))
        assert run.returncode == 0, run.stderr
    rows = {r["component"]: r for r in json.loads(result.stdout)}
    checks = rows["metric:citation_groundedness"]
    rest = SAMPLES - PILOT  # the pilot's samples are in the cache now: they cost nothing (the cache pass)
    assert (checks["calls_low"], checks["calls_high"]) == (rest, None)  # unpiloted: 1+ per answer
    assert checks["cached_calls"] == PILOT and rows["system"]["cached_calls"] == PILOT
    assert checks["piloted_calls"] == rest * SEGMENTS
    assert rows["system"]["piloted_calls"] is None  # exact patterns are not piloted
    assert f"pilot: {PILOT} samples (seeded order) made {piloted} calls (now in the LLM response cache)" in (
        result.stderr
    )
    assert server.calls - piloted == rest + checks["piloted_calls"]  # as estimated: the pilot's replies reused
    db = sqlite3.connect(config.parent / "ragassay-results.db")
    made, hits = db.execute("SELECT sum(calls), sum(cache_hits) FROM metric_values").fetchone()
    db.close()
    assert (made, hits) == (checks["piloted_calls"], PILOT * SEGMENTS)
