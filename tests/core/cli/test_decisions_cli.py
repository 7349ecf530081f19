"""Agent decisions scored end to end: no-retrieval baseline, naive RAG and the advanced boolean agent, driven
through the real CLI and openai client against a scripted local server."""

from __future__ import annotations

import pytest

from conftest import cli_env, ragassay_cli, write_project
from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")
pytestmark = pytest.mark.slow

ANSWERS = {"alpha": "Ada Lovelace Labs", "Beta": "O'Brien", "gamma": "radioactive decay"}
KNOWN_WITHOUT_SOURCES = {"gamma"}  # the "model" knows this one
WANTS_RETRIEVAL = {"alpha"}  # the agent asks for retrieval only here (so it misses Beta)

CONFIG = """
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    generator = {{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", cache = false }} }}
    retriever = "bm25"
    [systems.none]
    rag = "no_retrieval"
    [systems.naive]
    options = {{ top_k = 1 }}
    [systems.agent]
    rag = "boolean_agent_advanced"
    options = {{ top_k = 1 }}
    [evaluation]
    metrics = ["contains_answer"]
    judges = ["match"]
"""


def reply(request):
    messages = request.json["messages"]
    question = next(m["content"] for m in messages if m["role"] == "user")
    key = next(k for k in ANSWERS if k in question)
    if request.json.get("tool_choice"):
        return Turn(text=None, tool_calls=[("query_database", {"retrieve": key in WANTS_RETRIEVAL})])
    if "Sources:" in question or key in KNOWN_WITHOUT_SOURCES:
        return Turn(text=f"It is {ANSWERS[key]}.")
    return Turn(text="I don't know.")


def test_decisions_and_paired_comparison(tmp_path):
    with OpenAIChatServer(default=reply) as server:
        path = write_project(tmp_path, CONFIG.format(url=server.url))
        env = cli_env(OPENAI_API_KEY="sk-test-decisions")
        result = ragassay_cli("run", str(path), env=env)
        assert result.returncode == 0, result.stderr
    assert "retrieved" in result.stdout
    agent_row = next(line for line in result.stdout.splitlines() if "│ agent" in line)
    assert "1/3" in agent_row  # retrieved on one of three samples
    run_id = result.stderr.split("run ")[1].split(":")[0]

    decisions = ragassay_cli("decisions", run_id, "--config", str(path))
    assert decisions.returncode == 0, decisions.stderr
    row = next(line for line in decisions.stdout.splitlines() if "│ agent" in line).split("│")
    cells = [c.strip() for c in row[1:-1]]
    # samples, needed (alpha, Beta), retrieved (alpha), precision 1, recall 0.5, accuracy 2/3
    assert cells[1:7] == ["3", "2", "1", "1.000", "0.500", "0.667"]
    assert cells[8] == "2" and cells[9] == "0.500"  # skipped Beta and gamma: naive right on both, agent on gamma

    paired = ragassay_cli("compare", run_id, "--against", "none", "--config", str(path))
    assert paired.returncode == 0, paired.stderr
    naive_row = next(line for line in paired.stdout.splitlines() if "│ naive" in line and "[" in line)
    assert "+0.667" in naive_row and "2/1/0 n=3" in naive_row

    bad = ragassay_cli("compare", run_id, "--against", "nope", "--config", str(path))
    assert bad.returncode == 2 and "'nope' is not a system of the run" in bad.stderr
