"""``ragassay estimate`` counts the local model's prompt tokens with its own tokenizer and chat template: the
estimate of a system whose prompts are known before the run equals the input tokens the generator reports when
it runs them (fast: the tiny random Llama of test_local_llm), and the shipped SmolLM2 GGUF's tokenizer loads
from the GGUF file once, then from its saved copy (slow)."""

from __future__ import annotations

import asyncio
import math
import sqlite3

import pytest

from ragassay.config import load_config
from ragassay.engine.estimate.rows import as_markdown, estimate
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run
from ragassay.llm import LLMGenerator
from ragassay.llm.cache import close_caches
from ragassay.plugin_manager import get_plugin_host
from tests.conftest import write_project
from tests.plugins.local_llm.test_local_llm import tiny_model  # noqa: F401 - the fixture

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # both tests load a model (a tiny one built here, or SmolLM2)

from ragassay.plugins.local_llm import LocalGenerator  # noqa: E402

CONFIG = """
    [corpus]
    paths = ["corpus/*"]
    [dataset]
    options = {{ path = "qa.jsonl" }}
    [systems.oracle]
    rag = "oracle"
    generator = {{ name = "local", options = {{ model_path = "{model}", max_tokens = 2, threads = 1 }} }}
    [systems.bare]
    rag = "no_retrieval"
    generator = {{ name = "local", options = {{ model_path = "{model}", max_tokens = 2, threads = 1 }} }}
"""


def test_estimate_counts_the_prompt_tokens_the_local_model_receives(tmp_path, tiny_model, monkeypatch):  # noqa: F811
    path = write_project(tmp_path, CONFIG.format(model=tiny_model))
    loaded = load_config(path)
    plan = plan_run(loaded, get_plugin_host().registry)
    rows = {r.system: r for r in estimate(plan) if r.component == "system"}
    with monkeypatch.context() as patched:  # the documented fallback of a model whose tokenizer is not known
        patched.setattr(LocalGenerator, "token_counter", LLMGenerator.token_counter)
        approximated = {r.system: r for r in estimate(plan) if r.component == "system"}
    store = Project(loaded).open_store()
    try:
        asyncio.run(Runner(plan, store).run())
    finally:
        store.close()
        close_caches()
    con = sqlite3.connect(tmp_path / "ragassay-results.db")
    try:
        received = dict(con.execute("select system, sum(input_tokens) from outputs group by system").fetchall())
    finally:
        con.close()
    assert set(received) == {"oracle", "bare"} and all(received.values())
    for system, row in rows.items():
        assert row.tokenizer == f"{tiny_model.name} tokenizer"
        assert row.input_tokens == received[system], system  # chat template included: exact
        assert approximated[system].tokenizer == "chars/4"
        assert approximated[system].input_tokens not in (0, received[system])
        assert "tokens: " + row.tokenizer in as_markdown(rows.values())


@pytest.mark.slow
def test_smollm2_tokenizer_loads_from_the_gguf_once_then_from_its_saved_copy(tmp_path, monkeypatch):
    pytest.importorskip("gguf")
    from ragassay.plugins.local_llm import tokens
    from ragassay.plugins.local_llm.loader import resolve_source

    monkeypatch.setattr(tokens, "_loaded", {})  # no model of this process lends its tokenizer
    source = resolve_source(None)
    messages = [{"role": "system", "content": "Answer briefly."}, {"role": "user", "content": "Pourquoi? " * 30}]
    counts = []
    for expected in ("gguf_s", "cached_s"):
        monkeypatch.setattr(tokens, "_tokenizers", {})  # a new process
        counter = tokens.TokenCounter(source, tmp_path)
        counts.append(counter.count(messages))
        assert list(tokens.LOAD_TIMES) == [expected]
    assert counter.name == "SmolLM2-135M-Instruct.Q4_1 tokenizer"
    tokenizer = tokens.tokenizer_for(source, tmp_path)
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert "<|im_start|>assistant" in text  # the chat template is counted
    assert counts == [len(tokenizer(text, add_special_tokens=False)["input_ids"])] * 2
    assert counts[0] != math.ceil(sum(len(m["content"]) for m in messages) / 4)
    # an assumed text (a run of x) counts as characters / 4, not as the tokenizer splits "xxxx..."
    assumed = counter.count([{"role": "user", "content": "Pourquoi? " + "x" * 400}])
    assert assumed == counter.count([{"role": "user", "content": "Pourquoi? "}]) + 100
