"""[llm] settings reach components: the cache location, --no-cache, prices; generator request params."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.config import load_config
from ragassay.engine.runner import plan_run
from ragassay.errors import ConfigError
from ragassay.llm.backend import LLMBackend
from ragassay.llm.cache import close_caches
from ragassay.llm.generator import LLMGenerator
from ragassay.llm.settings import LLMSection, cache_url, runtime_from_context, runtime_settings
from ragassay.llm.types import LLMResponse


def test_cache_url_resolves_paths_under_the_cache_dir():
    assert cache_url("llm-cache.db", Path("/p/.cache")) == "sqlite:////p/.cache/llm-cache.db"
    assert cache_url("/abs/c.db", Path("/p")) == "sqlite:////abs/c.db"
    assert cache_url("postgresql://h/db", Path("/p")) == "postgresql://h/db"


def test_no_cache_turns_the_cache_off():
    assert runtime_settings(LLMSection(), Path("/c"))["cache"] is True
    assert runtime_settings(LLMSection(), Path("/c"), no_cache=True)["cache"] is False
    assert runtime_settings(LLMSection(cache=False), Path("/c"))["cache"] is False


def test_plan_run_puts_llm_settings_in_the_context(project, host):
    text = (
        project.read_text() + '\n[llm]\ncache_path = "responses.db"\n[llm.prices."my-model"]\n'
        "input_per_million = 1\noutput_per_million = 2\n"
    )
    project.write_text(text)
    plan = plan_run(load_config(project), host.registry, no_cache=True)
    runtime = runtime_from_context(plan.context)
    assert runtime.cache is False and runtime.cache_url.endswith(".ragassay-cache/responses.db")
    assert runtime.prices["my-model"].output_per_million == 2


def test_defaults_outside_a_run(tmp_path):
    runtime = runtime_from_context(ComponentContext(project_dir=tmp_path, cache_dir=tmp_path / "c"))
    assert runtime.cache and runtime.cache_url == f"sqlite:///{tmp_path}/c/llm-cache.db"


class EchoBackend(LLMBackend):
    name = "echo"

    async def complete(self, request):
        self.last = request
        return LLMResponse(text=request.messages[-1].content)


class EchoGenerator(LLMGenerator):
    """Echoes the last message (test double of a model backend)."""

    name = "echo-llm"

    def make_backend(self):
        return EchoBackend(self.options.model)


def _generator(tmp_path, run_cache=True, **options):
    settings = {"llm": runtime_settings(LLMSection(cache=run_cache), tmp_path)}
    return EchoGenerator(
        EchoGenerator.Options(model="m", **options),
        context=ComponentContext(project_dir=tmp_path, cache_dir=tmp_path, settings=settings),
    )


def test_generate_uses_messages_or_the_question_and_request_params(tmp_path):
    generator = _generator(tmp_path, temperature=0.3, max_tokens=50)
    generation = asyncio.run(
        generator.generate(GenerationRequest(question="q?", params={"max_tokens": 7, "sample_index": 2}))
    )
    sent = generator.client.backend.last
    assert generation.text == "q?" and sent.params.max_tokens == 7 and sent.params.temperature == 0.3
    assert sent.sample_index == 2 and generation.raw["backend"] == "echo" and generation.raw["cached"] is False
    with pytest.raises(ConfigError, match="unknown request params"):
        asyncio.run(generator.generate(GenerationRequest(question="q", params={"temprature": 1})))


def test_cache_off_in_the_run_or_the_component(tmp_path):
    try:
        assert _generator(tmp_path).client.cache is not None
        assert _generator(tmp_path, run_cache=False).client.cache is None
        assert _generator(tmp_path, cache=False).client.cache is None
    finally:
        close_caches()
