"""``ragassay estimate`` over every shipped component that calls a model: no row is unknown, fixed patterns are
exact counts, content-dependent ones are ranges, and a system that never retrieves makes no context-judging call.
No model is asked (the generators point at a closed port)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli_env, ragassay_cli, write_project

pytest.importorskip("openai")

SAMPLES = 3
GENERATOR = (
    '{ name = "openai", options = { model = "gpt-4o-mini", base_url = "http://127.0.0.1:9/v1", max_tokens = 50 } }'
)
CONFIG = f"""
    [project]
    name = "patterns"
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
    retriever = "bm25"
    generator = {GENERATOR}
    [systems.naive]
    options = {{ top_k = 2 }}
    [systems.none]
    rag = "no_retrieval"
    [systems.oracle]
    rag = "oracle"
    [systems.agent]
    rag = "boolean_agent"
    options = {{ top_k = 2 }}
    [systems.agent2]
    rag = "boolean_agent_advanced"
    options = {{ top_k = 2 }}
    [systems.dropped]
    rag = "perturbed"
    options = {{ system = "agent2", operator = {{ name = "drop_gold" }}, seed = 0 }}
    [evaluation]
    metrics = [
      {{ name = "answer_relevancy", options = {{ generator = "openai" }} }},
      {{ name = "context_relevancy", options = {{ generator = "openai" }} }},
      {{ name = "faithfulness", options = {{ generator = "openai", reply = "text" }} }},
      {{ name = "holistic_correctness", options = {{ generator = "openai" }} }},
      {{ name = "truthfulness", options = {{ generator = "openai" }} }},
      {{ name = "relevance", options = {{ generator = "openai" }} }},
      {{ name = "ragas_fact", options = {{ generator = "openai" }} }},
      {{ name = "citation_groundedness", options = {{ generator = "openai" }} }},
      {{ name = "rc_precision", options = {{ generator = "openai" }} }},
      {{ name = "rc_recall", options = {{ generator = "openai" }} }},
      {{ name = "refusal_llm", options = {{ generator = "openai" }} }},
      "token_recall",
    ]
    judges = [
      {{ name = "correctness", options = {{ generator = "openai" }} }},
      {{ name = "selfcheck_qa", options = {{ generator = "openai", samples = 2 }} }},
    ]
"""
QA = [
    {
        "question_id": f"q{i}",
        "question": f"Who built reactor {i}?",
        "reference_answers": ["Ada Lovelace Labs"],
        "reference_contexts": ["Ada Lovelace Labs built reactor 1."],
    }
    for i in range(SAMPLES)
]


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> dict[tuple[str, str], dict]:
    root = tmp_path_factory.mktemp("patterns")
    config = write_project(root, CONFIG, qa=QA, docs={"a.md": "Ada Lovelace Labs built reactor 1. It is in Paris."})
    result = ragassay_cli("estimate", str(config), "--format", "json", env={**cli_env(), "OPENAI_API_KEY": "sk-test"})
    assert result.returncode == 0, result.stderr
    return {(r["system"], r["component"]): r for r in json.loads(result.stdout)}


def calls(row: dict) -> tuple[int | None, int | None]:
    return row["calls_low"], row["calls_high"]


def test_no_shipped_model_component_is_unknown(rows):
    unknown = [key for key, row in rows.items() if row["calls_low"] is None]
    assert unknown == []
    assert calls(rows[("naive", "metric:token_recall")]) == (0, 0)


def test_fixed_patterns_are_exact_and_re_asks_are_the_upper_end(rows):
    n = SAMPLES
    assert calls(rows[("naive", "system")]) == (n, n)
    assert calls(rows[("none", "system")]) == (n, n)
    assert calls(rows[("oracle", "system")]) == (n, n)
    assert calls(rows[("agent", "system")]) == (n, 2 * n)  # decide, then maybe answer
    assert calls(rows[("agent2", "system")]) == (2 * n, 3 * n)  # answer + decision, then maybe answer
    assert calls(rows[("naive", "judge:correctness")]) == (n, 3 * n)  # 2 corrective re-asks at most
    assert calls(rows[("naive", "metric:faithfulness")]) == (n, 3 * n)  # free text: TEXT_RETRIES
    assert calls(rows[("naive", "judge:selfcheck_qa")]) == (4 * n, 2 * n + 2 * 3 * n)  # 2 samples + 2 comparisons
    assert rows[("naive", "system")]["output_tokens_max"] == 50 * n


def test_content_dependent_patterns_are_ranges(rows):
    assert calls(rows[("naive", "metric:ragas_fact")]) == (2 * SAMPLES, None)  # extraction + >= 1 statement
    assert calls(rows[("naive", "metric:citation_groundedness")]) == (SAMPLES, None)
    low, high = calls(rows[("naive", "metric:rc_precision")])
    assert 0 < low < high
    assert calls(rows[("naive", "metric:rc_recall")]) == (0, 0)  # the claim run is made once, by rc_precision
    assert calls(rows[("naive", "metric:refusal_llm")]) == (0, 3 * SAMPLES)


def test_a_system_that_never_retrieves_gets_no_context_judging(rows):
    assert calls(rows[("none", "metric:context_relevancy")]) == (0, 0)
    assert calls(rows[("none", "metric:faithfulness")]) == (0, 0)
    assert calls(rows[("naive", "metric:context_relevancy")]) == (SAMPLES, 3 * SAMPLES)
    assert (
        rows[("naive", "metric:context_relevancy")]["input_tokens"]
        > rows[("naive", "metric:answer_relevancy")]["input_tokens"]
    )


def test_a_perturbed_system_makes_the_calls_of_the_system_it_wraps(rows):
    assert calls(rows[("dropped", "system")]) == calls(rows[("agent2", "system")]) == (2 * SAMPLES, 3 * SAMPLES)


def test_truthfulness_and_relevance_share_one_request(rows):
    """With the same options they send the same request, which the response cache serves the second time."""
    assert calls(rows[("naive", "metric:truthfulness")]) == (SAMPLES, 3 * SAMPLES)
    relevance = rows[("naive", "metric:relevance")]
    assert calls(relevance) == (0, 0) and relevance["input_tokens"] == 0
    assert "the same requests as metric:truthfulness" in relevance["note"]
