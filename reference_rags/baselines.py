"""Baselines that bracket a RAG system: no retrieval at all, and the oracle given the reference contexts.

``no_retrieval`` measures what the generator knows on its own (the boolean-agent paper's "no RAG" row,
seeds/003 Table II); ``oracle`` measures the generator with perfect retrieval. A system between them tells
how much retrieval helps and how much is left on the table.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, GenerationRequest, RAGOutput, RAGSystem, Role, Sample, hookimpl

from .naive import DEFAULT_SYSTEM_PROMPT, build_messages

NO_RETRIEVAL_PROMPT = "You are a helpful assistant. Answer the question concisely."


class NoRetrievalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system_prompt: str = Field(NO_RETRIEVAL_PROMPT, description="System message given to the generator.")


class NoRetrievalRAG(RAGSystem):
    """Baseline: the generator answers from its own knowledge, with no retrieval."""

    name = "no_retrieval"
    retrieval = "never"
    Options = NoRetrievalOptions
    roles = {"generator": Role("generator", description="Answers the question with no context.")}

    async def answer(self, sample: Sample) -> RAGOutput:
        messages = build_messages(self.options.system_prompt, sample.question, [])
        generation = await self.parts["generator"].generate(
            GenerationRequest(question=sample.question, messages=messages)
        )
        return RAGOutput(
            answer=generation.text, retrieved=False, usage=generation.usage, trace={"generator": generation.raw}
        )

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One generator call per sample."""
        return _one_call(
            self.parts["generator"], sample, hints, build_messages(self.options.system_prompt, sample.question, [])
        )


class OracleOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system_prompt: str = Field(DEFAULT_SYSTEM_PROMPT, description="System message given to the generator.")


class OracleRAG(RAGSystem):
    """Baseline: the generator is given the sample's reference contexts, i.e. perfect retrieval."""

    name = "oracle"
    Options = OracleOptions
    roles = {"generator": Role("generator", description="Answers from the reference contexts.")}

    async def answer(self, sample: Sample) -> RAGOutput:
        if not sample.reference_contexts:
            raise ValueError(f"sample {sample.question_id} has no reference_contexts for the oracle to give")
        ids = _context_ids(sample)
        chunks = [Chunk(id=cid, document_id=cid, text=text) for cid, text in zip(ids, sample.reference_contexts)]
        messages = build_messages(self.options.system_prompt, sample.question, sample.reference_contexts)
        generation = await self.parts["generator"].generate(
            GenerationRequest(question=sample.question, contexts=chunks, messages=messages)
        )
        return RAGOutput(
            answer=generation.text,
            contexts=list(sample.reference_contexts),
            context_ids=ids,
            context_document_ids=ids,
            retrieved=True,
            usage=generation.usage,
            trace={"generator": generation.raw, "retrieval": {"source": "reference_contexts"}},
        )

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """One generator call per sample with reference contexts (none without: the sample fails)."""
        if not sample.reference_contexts:
            return _one_call(self.parts["generator"], sample, hints, None)
        messages = build_messages(self.options.system_prompt, sample.question, sample.reference_contexts)
        return _one_call(self.parts["generator"], sample, hints, messages)


def _one_call(generator: Any, sample: Sample, hints: Any, messages: list[dict[str, str]] | None) -> Any:
    """One call sending ``messages`` (None: no call) through ``generator``."""
    if not hasattr(generator, "calls"):
        return generator.call_pattern(sample, hints)
    if messages is None:
        return generator.calls(0, 0, 0)
    return generator.calls(sum(len(m["content"]) for m in messages), messages=[messages])


def _context_ids(sample: Sample) -> list[str]:
    """The reference context ids when they align with the texts, else positional ids."""
    if len(sample.reference_context_ids) == len(sample.reference_contexts):
        return list(sample.reference_context_ids)
    return [f"{sample.question_id}:reference:{i}" for i in range(len(sample.reference_contexts))]


@hookimpl
def register_rags(register):
    register(NoRetrievalRAG)
    register(OracleRAG)
