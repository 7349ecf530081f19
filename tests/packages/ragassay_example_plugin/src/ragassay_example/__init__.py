"""An example third-party plugin: a retriever, a RAG system and a metric.

Its components are addressed as ``example/<name>`` in configs.
"""

from __future__ import annotations

import asyncio
import os
import time

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, RAGOutput, RAGSystem, Retriever, ScoredChunk, hookimpl


class LongestFirstRetriever(Retriever):
    """Returns the longest chunks, whatever the query (a deliberately bad retriever)."""

    name = "longest"

    def index(self, chunks):
        self.chunks = sorted(chunks, key=lambda c: (-len(c.text), c.id))

    def retrieve(self, query, k):
        return [ScoredChunk(chunk=c, score=float(len(c.text)), rank=i) for i, c in enumerate(self.chunks[:k], 1)]


class SlowOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    delay_s: float = Field(0.05, description="Seconds to sleep per sample.")
    log: str | None = Field(None, description="File to append each answered question_id to.")
    prepare_s: float = Field(
        0.0,
        description="Seconds to block in prepare (stands in for building an index); "
        "'prepare' is logged when it starts.",
    )


class SlowEcho(RAGSystem):
    """Sleeps, then answers with the question text (for resume and kill tests)."""

    name = "slow_echo"
    Options = SlowOptions

    def prepare(self, corpus):
        if self.options.prepare_s:
            self._log("prepare")
            time.sleep(self.options.prepare_s)  # blocking, like native index-building code

    async def answer(self, sample):
        await asyncio.sleep(self.options.delay_s)
        self._log(sample.question_id)
        return RAGOutput(answer=sample.question, retrieved=False)

    def _log(self, line):
        if self.options.log:
            with open(self.options.log, "a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
                os.fsync(handle.fileno())


class AnswerLength(Metric):
    """Number of words in the answer (not a quality metric; shows a plugin metric)."""

    name = "answer_words"
    formula = "len(answer.split())"
    source = "example plugin"

    def score(self, sample, output):
        return float(len(output.answer.split()))


@hookimpl
def register_retrievers(register):
    register(LongestFirstRetriever)


@hookimpl
def register_rags(register):
    register(SlowEcho)


@hookimpl
def register_metrics(register):
    register(AnswerLength)
