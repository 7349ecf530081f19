"""``ragassay estimate`` under reasoning options: a judge on an OpenAI reasoning effort or an Anthropic thinking
budget gets its assumed reasoning tokens per call, priced at the reasoning price; without the option, none. No
model is asked (the generators point at a closed port)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli_env, ragassay_cli, write_project

pytest.importorskip("openai")

SAMPLES = 2
OPENAI = (
    '{{ name = "openai", options = {{ model = "o3-mini", base_url = "http://127.0.0.1:9/v1", max_tokens = 5000{} }} }}'
)
ANTHROPIC = (
    '{ name = "anthropic", options = { model = "claude-sonnet-4-5", base_url = "http://127.0.0.1:9", '
    "max_tokens = 100, thinking_budget_tokens = 2048 } }"
)
CONFIG = f"""
    [project]
    name = "reasoning"
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [systems.none]
    rag = "no_retrieval"
    generator = "extractive"
    [llm.prices."o3-mini"]
    input_per_million = 1.0
    output_per_million = 4.0
    reasoning_per_million = 8.0
    [evaluation]
    judges = [
      {{ name = "correctness", label = "plain", options = {{ generator = {OPENAI.format("")} }} }},
      {{ name = "correctness", label = "low", options = {{ generator = {OPENAI.format(', reasoning_effort = "low"')} }} }},
      {{ name = "correctness", label = "thinking", options = {{ generator = {ANTHROPIC} }} }},
    ]
"""
QA = [
    {"question_id": f"q{i}", "question": f"Who built reactor {i}?", "reference_answers": ["Ada Lovelace Labs"]}
    for i in range(SAMPLES)
]


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("reasoning")
    config = write_project(root, CONFIG, qa=QA, docs={"a.md": "Ada Lovelace Labs built reactor 1."})
    env = {**cli_env(), "OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-ant-test"}
    result = ragassay_cli("estimate", str(config), "--format", "json", env=env)
    assert result.returncode == 0, result.stderr
    return {r["component"]: r for r in json.loads(result.stdout) if r["system"] == "none"}


def test_reasoning_options_add_their_assumed_tokens_and_price_them_apart(rows):
    plain, low, thinking = rows["judge:plain"], rows["judge:low"], rows["judge:thinking"]
    n = plain["calls_low"]
    assert n == SAMPLES and plain["reasoning_tokens"] == 0 and plain["output_tokens_max"] == 5000 * n
    # OpenAI: max_completion_tokens bounds reasoning and answer together; low effort assumes 1024 per call
    assert low["reasoning_tokens"] == 1024 * n and low["output_tokens_max"] == (5000 - 1024) * n
    assert low["input_tokens"] == plain["input_tokens"]
    extra = 1024 * n * (8.0 - 4.0) / 1e6  # the same tokens, reasoning priced at 8 instead of 4
    assert low["usd"] == pytest.approx(plain["usd"] + extra)
    # Anthropic: the thinking budget comes on top of max_tokens
    assert thinking["reasoning_tokens"] == 2048 * n and thinking["output_tokens_max"] == 100 * n
