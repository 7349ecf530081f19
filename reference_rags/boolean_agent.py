"""Boolean agent RAG (Kenneweg et al., seeds/003 section V): retrieve only when the model asks for it.

- ``boolean_agent`` (simple BARAG): one call that offers a tool with a single ``retrieve: bool`` argument,
  described as querying a database for additional information, only if necessary. Retrieval happens only
  when the model calls it with ``true``; a model that answers without calling the tool is answered as is.
- ``boolean_agent_advanced``: answer with no context first, then a forced call of a tool described as "Set to
  true if you could have answered the last question better with more information"; if true, retrieve and
  answer again with the naive RAG prompt, else return the first answer.

Every output records the decision, how it was reached, and each model call's tokens and latency; token usage is
summed per sample, so reports show the paper's columns (input and output tokens, number of retrievals).
A tool call whose arguments are not a boolean counts as "retrieve" (the safe side), and says so in the trace.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Corpus, RAGOutput, Sample, TokenUsage, hookimpl

from .naive import DEFAULT_SYSTEM_PROMPT, NaiveRAG, build_messages

AGENT_SYSTEM_PROMPT = "You are a helpful assistant. Answer the user's question."
SIMPLE_TOOL_DESCRIPTION = (
    "Set to true to gain additional information from a vector database for answering the "
    "question. Only do this if necessary."
)
ADVANCED_TOOL_DESCRIPTION = "Set to true if you could have answered the last question better with more information."


def _tool(name: str, description: str) -> Any:
    from ragassay.llm import ToolSpec

    return ToolSpec(
        name=name,
        description=description,
        parameters={
            "type": "object",
            "required": ["retrieve"],
            "properties": {"retrieve": {"type": "boolean", "description": description}},
        },
    )


class AgentOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(5, ge=1, le=1000, description="Chunks retrieved when the agent decides to retrieve.")
    system_prompt: str = Field(AGENT_SYSTEM_PROMPT, description="System message of the answer-without-context call.")
    rag_system_prompt: str = Field(DEFAULT_SYSTEM_PROMPT, description="System message of the answer-with-sources call.")
    tool_name: str = Field("query_database", pattern=r"^[A-Za-z0-9_-]{1,64}$", description="Name of the decision tool.")
    tool_description: str | None = Field(None, description="Description of the decision tool (default: the paper's).")


class _AgentBase(NaiveRAG):
    """Shared parts: a naive RAG for the retrieval branch, and call accounting."""

    Options = AgentOptions
    default_tool_description = SIMPLE_TOOL_DESCRIPTION
    roles = NaiveRAG.roles

    def prepare(self, corpus: Corpus) -> None:
        self.parts["generator"].require_chat(f"rag '{self.name}' (it offers the model a retrieval tool)")
        super().prepare(corpus)

    @property
    def tool(self):
        return _tool(self.options.tool_name, self.options.tool_description or self.default_tool_description)

    async def _call(self, calls: list[dict[str, Any]], step: str, messages: list[dict[str, Any]], **kwargs: Any):
        start = time.perf_counter()
        response = await self.parts["generator"].chat(messages, **kwargs)
        calls.append(
            {
                "step": step,
                "usage": response.usage,
                "input_tokens": response.usage.input_tokens,
                "output_tokens": response.usage.output_tokens,
                "cached": response.cached,
                "latency_s": round(time.perf_counter() - start, 6),
            }
        )
        return response

    def _pattern(self, sample: Sample, hints: Any, decide_chars: int, low: int, high: int, note: str) -> Any:
        """``low``..``high`` calls: the fixed ones without sources (``decide_chars`` with the tool), the last one
        (when the model decides to retrieve) with the top-k sources."""
        generator = self.parts["generator"]
        if not hasattr(generator, "calls"):
            return generator.call_pattern(sample, hints)
        tool = len(self.tool.model_dump_json())
        return generator.calls(decide_chars + tool, low, high, note)

    def _decision(self, response) -> tuple[bool | None, str]:
        """(retrieve?, how decided) from a response: None when the tool was not called."""
        call = response.tool_call(self.options.tool_name)
        if call is None:
            return None, "no tool call"
        value = call.arguments.get("retrieve")
        if isinstance(value, bool):
            return value, "tool call"
        return True, f"malformed tool arguments {call.raw_arguments or call.arguments!r}: retrieving"

    async def _answer_with_retrieval(self, sample: Sample, calls: list[dict[str, Any]]) -> tuple[str, list, Any, dict]:
        hits, retrieval = await self.parts["retriever"].aretrieve_traced(sample.question, self.options.top_k)
        chunks = [hit.chunk for hit in hits]
        messages = build_messages(self.options.rag_system_prompt, sample.question, [c.text for c in chunks])
        response = await self._call(calls, "answer_with_sources", messages)
        return response.text, chunks, hits, retrieval

    def _output(
        self,
        answer: str,
        retrieved: bool,
        how: str,
        calls: list[dict[str, Any]],
        chunks=(),
        hits=(),
        retrieval: dict[str, Any] | None = None,
    ) -> RAGOutput:
        usage = sum((c.pop("usage") for c in calls), TokenUsage())  # keeps per-model counts for pricing
        return RAGOutput(
            answer=answer,
            contexts=[c.text for c in chunks],
            context_ids=[c.id for c in chunks],
            context_document_ids=[c.document_id for c in chunks],
            retrieved=retrieved,
            usage=usage,
            trace={
                "decision": how,
                "calls": calls,
                "scores": [round(h.score, 6) for h in hits],
                **({"retrieval": retrieval} if retrieved else {}),
            },
        )


class BooleanAgentRAG(_AgentBase):
    """Simple boolean agent: the model may call a retrieve tool; retrieval only when it asks (seeds/003 V-A)."""

    name = "boolean_agent"
    retrieval = "decides"

    async def answer(self, sample: Sample) -> RAGOutput:
        calls: list[dict[str, Any]] = []
        messages = build_messages(self.options.system_prompt, sample.question, [])
        first = await self._call(calls, "decide_or_answer", messages, tools=[self.tool], tool_choice="auto")
        retrieve, how = self._decision(first)
        if retrieve:
            answer, chunks, hits, retrieval = await self._answer_with_retrieval(sample, calls)
            return self._output(answer, True, how, calls, chunks, hits, retrieval)
        if retrieve is None and first.text.strip():
            return self._output(first.text, False, how, calls)
        # the tool was called with false (or nothing was said): answer without context
        second = await self._call(calls, "answer_without_sources", messages)
        return self._output(second.text, False, how, calls)

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """1 call (decide or answer), up to 2 (then the answer, with or without sources)."""
        chars = self.prompt_chars(self.options.system_prompt, sample, hints, with_sources=False)
        return self._pattern(sample, hints, chars, 1, 2, "1 decision call, +1 answer when the model asks to retrieve")


class BooleanAgentAdvancedRAG(_AgentBase):
    """Advanced boolean agent: answer first, then a forced decision whether more information would help."""

    name = "boolean_agent_advanced"
    retrieval = "decides"
    default_tool_description = ADVANCED_TOOL_DESCRIPTION

    async def answer(self, sample: Sample) -> RAGOutput:
        calls: list[dict[str, Any]] = []
        messages = build_messages(self.options.system_prompt, sample.question, [])
        base = await self._call(calls, "answer_without_sources", messages)
        follow_up = messages + [{"role": "assistant", "content": base.text}]
        decision = await self._call(calls, "decide", follow_up, tools=[self.tool], tool_choice=self.options.tool_name)
        retrieve, how = self._decision(decision)
        if retrieve is None:
            retrieve, how = True, "forced tool call not made: retrieving"
        if not retrieve:
            return self._output(base.text, False, how, calls)
        answer, chunks, hits, retrieval = await self._answer_with_retrieval(sample, calls)
        return self._output(answer, True, how, calls, chunks, hits, retrieval)

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """2 calls (answer, forced decision), 3 when the model decides to retrieve."""
        chars = self.prompt_chars(self.options.system_prompt, sample, hints, with_sources=False)
        chars = 2 * chars + hints.answer_chars  # the decision call repeats the question and the first answer
        return self._pattern(sample, hints, chars, 2, 3, "answer + decision, +1 answer with sources on 'retrieve'")


@hookimpl
def register_rags(register):
    register(BooleanAgentRAG)
    register(BooleanAgentAdvancedRAG)
