"""The LLM layer shared by generators and judges: one interface for every backend, a persistent response
cache, token accounting and cost, bounded concurrency, retries.

Judges and agentic RAG systems call models through a generator built from the config::

    from ragassay.llm import LLMGenerator, ToolSpec
    generator = context.build("generator", "openai")          # an LLMGenerator
    reply = await generator.chat(messages, tools=[ToolSpec.from_model(Retrieve)], tool_choice="Retrieve")

LLM judges and LLM-scored metrics build on ``LLMJudging`` with options on ``JudgeOptions`` (explanation first,
validated replies, bounded re-asks, an identity; helpers ``fill`` and ``one_verdict``), or call ``ask_structured``
directly. Backend plugins (openai, anthropic, local) also find here what they build on: ``LLMBackend``,
``RemoteBackend`` (an HTTP backend on ``RemoteOptions``), ``PerLoop``, ``shards_for``, ``read_key``,
``sdk_errors`` and the structured-output helpers. See docs/llm.md and docs/judges.md.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ChatMessage": "types",
    "DecodingParams": "types",
    "LLMRequest": "types",
    "LLMResponse": "types",
    "ToolCall": "types",
    "ToolSpec": "types",
    "LLMBackend": "backend",
    "RemoteBackend": "generator",
    "LLMClient": "client",
    "LLMGenerator": "generator",
    "LLMOptions": "generator",
    "RemoteOptions": "generator",
    "PRICES_AS_OF": "pricing",
    "PriceTable": "pricing",
    "RetryPolicy": "retry",
    "RetryableError": "retry",
    # for backend authors
    "PerLoop": "backend",
    "shards_for": "backend",
    "read_key": "keys",
    "sdk_errors": "sdk",
    "StructuredOutputError": "structured",
    "extract_json": "structured",
    "schema_instructions": "structured",
    # for judge and LLM-metric authors (docs/judges.md)
    "LLMJudging": "judge_base",
    "JudgeOptions": "judge_base",
    "fill": "judge_base",
    "one_verdict": "judge_base",
    "TEXT_RETRIES": "judge_base",
    "Exemplar": "exemplars",
    "exemplar_version": "exemplars",
    "render_exemplars": "exemplars",
    "JudgeReply": "judging",
    "ask_structured": "judging",
    "find_verdict": "judging",
    "verdict_words": "judging",
    # for call_pattern hooks (ragassay estimate)
    "asks": "patterns",
    "answer_text": "patterns",
    "split_assumed": "patterns",
    "context_texts": "patterns",
    "message_chars": "patterns",
    "unbounded": "patterns",
    "metering": "meter",
    "current_repeat": "repeats",
    "repeating": "repeats",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import on first use, so that reading a config (which imports ``llm.settings``) stays cheap."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ragassay.llm' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
