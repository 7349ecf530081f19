"""The LLM layer end to end through the real CLI: a naive RAG whose generator is ``openai`` pointed at a local
chat-completions server. The response cache (re-runs make no calls, --no-cache, ragassay cache clear/stats),
tokens and cost in ``compare``, failed calls marked per sample, and no API key anywhere it could leak."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import cli_env, ragassay_cli, write_project
from tests.servers.base import Reply
from tests.servers.openai_chat import OpenAIChatServer, Turn, stalled

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

CONFIG = """
    [project]
    name = "llm"
    concurrency = 4

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    retriever = "bm25"

    [systems.priced]
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", backoff_s = 0.01, timeout_s = {timeout}, max_retries = 1 }} }}
    options = {{ top_k = 2 }}

    [systems.unpriced]
    extends = "priced"
    generator = {{ name = "openai", options = {{ model = "my-vllm-model", base_url = "{url}/v1", backoff_s = 0.01 }} }}
"""


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


def _project(root: Path, server, timeout: float = 120) -> Path:
    """The project; ``timeout`` (seconds) is generous unless a test is about timeouts, so that no outcome
    depends on how fast a loaded machine answers a local request."""
    server.reset()
    server.default = lambda request: Turn(text="Ada Lovelace Labs [1]", usage=(1000, 20, 200))
    return write_project(root, CONFIG.format(url=server.url, timeout=timeout))


def run(config: Path, *args: str, env=None):
    result = ragassay_cli("run", str(config), *args, env=env)
    assert result.returncode == 0, result.stderr
    return result


def test_rerun_makes_no_calls_no_cache_does_and_clear_empties(tmp_path, server):
    config = _project(tmp_path, server)
    first = run(config)
    assert server.calls == 6  # 2 systems x 3 questions
    assert "tokens in/out/cached" in first.stdout and "1000/20/200" in first.stdout

    run(config, "--new")
    assert server.calls == 6  # every reply from the cache

    run(config, "--new", "--no-cache")
    assert server.calls == 12

    stats = json.loads(ragassay_cli("cache", "stats", "--config", str(config), "--json").stdout)
    assert stats["entries"] == 6 and {r["model"] for r in stats["by_model"]} == {"gpt-4o-mini", "my-vllm-model"}
    cleared = ragassay_cli("cache", "clear", "--config", str(config), "--backend", "openai")
    assert cleared.returncode == 0 and "removed 6 cached responses" in cleared.stdout
    run(config, "--new")
    assert server.calls == 18


def test_compare_shows_tokens_and_cost_and_explains_unknown_prices(tmp_path, server):
    config = _project(tmp_path, server)
    result = run(config, "--quiet")
    run_id = result.stderr.split("run ")[1].split(":")[0]
    compare = ragassay_cli("compare", run_id, "--config", str(config))
    assert compare.returncode == 0, compare.stderr
    table = compare.stdout.split("latency and the quality-cost-latency frontier")[0]  # the comparison table
    lines = {line.split("│")[1].strip(): line for line in table.splitlines() if line.count("│") > 3}
    # gpt-4o-mini: 3 samples x (800 x 0.15 + 200 x 0.075 + 20 x 0.60) / 1e6 USD
    assert "0.0004" in lines["priced"] and "1000/20/200" in lines["priced"]
    assert "?" in [cell.strip() for cell in lines["unpriced"].split("│")]  # the cost column: unknown, not 0
    assert "no price for openai/my-vllm-model" in compare.stdout
    assert '[llm.prices."my-vllm-model"]' in compare.stdout
    assert (
        f"run {run_id[:8]}: 6000 input and 120 output tokens, 6 model calls, 0 cached replies, cost $ ?"
        in compare.stdout
    )


def test_failed_calls_fail_their_sample_and_no_key_leaks_anywhere(tmp_path, server):
    planted = "sk-test-PLANTED-9f8e7d6c5b4a"
    config = _project(tmp_path, server, timeout=4)  # both systems inherit timeout_s = 4 and max_retries = 1

    def reply(request):
        question = server.last_user_text(request)
        if "salmon" in question:  # a permanent failure whose body echoes the key back
            return Reply(401, {"error": {"message": f"Incorrect API key: {request.headers['authorization']}"}})
        if "gamma" in question:  # stalls past timeout_s on every attempt
            return stalled(15.0, Turn(text="too late"))
        return Turn(text="Ada Lovelace Labs [1]")

    server.default = reply
    env = cli_env(OPENAI_API_KEY=planted)
    result = run(config, env=env)
    assert "6 units done" in result.stderr and "4 failed" in result.stderr  # the run went on
    assert "HTTP 401" in result.stderr and "no response within 4 s (timeout); gave up after 2 attempts" in result.stderr
    run_id = result.stderr.split("run ")[1].split(":")[0]
    show = ragassay_cli("show", run_id, "q2", "--config", str(config), env=env)
    compare = ragassay_cli("compare", run_id, "--config", str(config), env=env)
    stats = ragassay_cli("cache", "stats", "--config", str(config), env=env)
    texts = [
        result.stdout,
        result.stderr,
        show.stdout,
        show.stderr,
        compare.stdout,
        compare.stderr,
        stats.stdout,
        stats.stderr,
    ]
    assert all(planted not in text for text in texts)
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "llm-cache.db" for p in files) and any(p.name == "ragassay-results.db" for p in files)
    for path in files:
        assert planted.encode() not in path.read_bytes(), f"key found in {path}"
    with sqlite3.connect(tmp_path / "ragassay-results.db") as conn:
        errors = [row[0] for row in conn.execute("SELECT error FROM outputs WHERE status = 'failed'")]
    assert len(errors) == 4 and all("ProviderError" in e for e in errors)


def test_cache_commands_on_a_project_without_a_cache(project):
    """In-process: stats and clear work before any model was called; --models removes cached weights."""
    from click.testing import CliRunner

    from ragassay.cli.main import cli

    runner = CliRunner()
    stats = runner.invoke(cli, ["cache", "stats", "--config", str(project), "--json"])
    assert stats.exit_code == 0 and json.loads(stats.output)["entries"] == 0
    weights = project.parent / ".ragassay-cache" / "models" / "abc"
    weights.mkdir(parents=True)
    (weights / "model.safetensors").write_bytes(b"0" * 1000)
    cleared = runner.invoke(cli, ["cache", "clear", "--config", str(project), "--models"])
    assert cleared.exit_code == 0 and "removed 0 cached responses" in cleared.output
    assert "removed 0.0 MB of cached model weights" in cleared.output and not weights.exists()
