"""What a reference agent records while it works: one :class:`ragassay.Step` per model call and per retrieval, the
answer step last, the tokens summed (per model too, for pricing), and the union of what was retrieved, in order.

Each step gets the next id (``s1``, ``s2``, ...), its wall time (``latency_s``) and start (``started_at``); a
model call keeps its prompt (the last message), its reply and its usage, a retrieval its query and the ranked
chunk ids, document ids and scores. A step whose reply could not be used says so in ``attributes["fallback"]``,
and the output's ``trace["fallbacks"]`` lists every such reason: a fallback is never a silent success.
"""

from __future__ import annotations

import time
from typing import Any

from ragassay import RAGOutput, ScoredChunk, Step, TokenUsage


class TrajectoryRecorder:
    """Runs an agent's model calls and retrievals and records them as steps; :meth:`output` builds the RAGOutput."""

    def __init__(self, generator: Any, retriever: Any):
        self.generator = generator
        self.retriever = retriever
        self.steps: list[Step] = []
        self.usage = TokenUsage()
        self.fallbacks: list[str] = []
        self._hits: dict[str, ScoredChunk] = {}  # the union of retrieved chunks, first retrieval first

    def _next_id(self) -> str:
        return f"s{len(self.steps) + 1}"

    async def call(self, purpose: str, messages: list[dict[str, Any]], **attributes: Any) -> tuple[str, Step]:
        """One model call (``purpose``: "decompose", "read", "act", "answer"); returns its text and its step
        (whose ``attributes`` the caller may complete with what it parsed)."""
        started, start = time.time(), time.perf_counter()
        params = attributes.pop("params", None)
        response = await self.generator.chat(messages, params=params)
        latency = round(time.perf_counter() - start, 6)
        self.usage = self.usage + response.usage
        model = next(iter(response.usage.by_model), None) or response.model or str(self.generator.options.model)
        step = Step(
            id=self._next_id(),
            kind="model_call",
            name=model,
            input=messages[-1]["content"],
            output=response.text,
            usage=response.usage,
            latency_s=latency,
            started_at=started,
            attributes={"call": purpose, "cached": response.cached, **attributes},
        )
        self.steps.append(step)
        return response.text, step

    async def retrieve(self, query: str, k: int, **attributes: Any) -> list[ScoredChunk]:
        """Retrieve the top ``k`` chunks for ``query``, record the step, add new chunks to the union."""
        started, start = time.time(), time.perf_counter()
        hits, trace = await self.retriever.aretrieve_traced(query, k)
        latency = round(time.perf_counter() - start, 6)
        extra = {"trace": trace} if trace else {}
        self.steps.append(
            Step(
                id=self._next_id(),
                kind="retrieval",
                name=self.retriever.name,
                query=query,
                context_ids=[h.chunk.id for h in hits],
                document_ids=[h.chunk.document_id for h in hits],
                scores=[round(float(h.score), 6) for h in hits],
                latency_s=latency,
                started_at=started,
                attributes={**attributes, **extra},
            )
        )
        for hit in hits:
            self._hits.setdefault(hit.chunk.id, hit)
        return hits

    def fallback(self, step: Step, reason: str) -> None:
        """Record on ``step`` (and in the output's trace) that its reply could not be used, and why."""
        step.attributes["fallback"] = reason
        self.fallbacks.append(f"{step.id}: {reason}")

    @property
    def union(self) -> list[ScoredChunk]:
        """Every chunk retrieved so far, once, in the order first retrieved."""
        return list(self._hits.values())

    def retrievals(self) -> int:
        """How many retrieval steps were made."""
        return sum(1 for s in self.steps if s.kind == "retrieval")

    def output(self, answer: str, trace: dict[str, Any], **attributes: Any) -> RAGOutput:
        """The RAGOutput: the answer step appended, the union of retrieved chunks as the contexts, usage summed."""
        self.steps.append(Step(id=self._next_id(), kind="answer", output=answer, attributes=attributes))
        hits = self.union
        return RAGOutput(
            answer=answer,
            contexts=[h.chunk.text for h in hits],
            context_ids=[h.chunk.id for h in hits],
            context_document_ids=[h.chunk.document_id for h in hits],
            retrieved=self.retrievals() > 0,
            usage=self.usage,
            trace={
                **trace,
                "scores": [round(float(h.score), 6) for h in hits],
                "retrievals": self.retrievals(),
                "fallbacks": list(self.fallbacks),
            },
            trajectory=self.steps,
        )
