"""Naive RAG: top-k retrieval, numbered sources in the prompt, ids and document ids in the output."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import Corpus, Generation, Generator
from ragassay.errors import DatasetError
from ragassay.models import Document, Sample, TokenUsage
from ragassay.plugin_manager import load_plugins


class RecordingGenerator(Generator):
    """Returns a fixed answer and keeps the request (the far side of the generator boundary)."""

    name = "recording"

    async def generate(self, request):
        self.request = request
        return Generation(text="the answer [1]", usage=TokenUsage(input_tokens=10, output_tokens=3, calls=1))


def build(top_k=2):
    host = load_plugins()
    registry = host.registry
    chunker = registry.get("chunker", "recursive").cls(
        registry.get("chunker", "recursive").cls.Options(size=60, overlap=0)
    )
    retriever = registry.get("retriever", "bm25").cls()
    naive = registry.get("rag", "naive").cls
    return naive(
        naive.Options(top_k=top_k),
        parts={"chunker": chunker, "retriever": retriever, "generator": RecordingGenerator()},
    )


DOCS = [
    Document(id="salmon", text="Salmon swim upstream to spawn in rivers."),
    Document(id="bees", text="Bees make honey from nectar in their hives."),
    Document(id="stars", text="Stars are fusing hydrogen into helium."),
]


def test_answer_records_contexts_ids_usage_and_prompt():
    rag = build()
    rag.prepare(Corpus(DOCS))
    output = asyncio.run(rag.answer(Sample(question_id="q", question="Where do salmon spawn?")))
    assert output.answer == "the answer [1]" and output.retrieved is True
    assert output.context_ids[0] == "salmon#0" and output.context_document_ids[0] == "salmon"
    assert len(output.contexts) <= 2 and output.usage.input_tokens == 10
    messages = rag.parts["generator"].request.messages
    assert messages[0]["role"] == "system" and "[n]" in messages[0]["content"]
    assert messages[1]["content"].startswith("Sources:\n[1] Salmon swim upstream")
    assert messages[1]["content"].endswith("Question: Where do salmon spawn?")


def test_empty_corpus_is_a_dataset_error():
    rag = build()
    with pytest.raises(DatasetError, match="corpus has no text"):
        rag.prepare(Corpus([Document(id="e", text="")]))
