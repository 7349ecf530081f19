"""One test per hook (test_hook_<name>): a plugin registers a component through it and the component is
used by a real run through a config, addressed as plugin/name."""

from __future__ import annotations

import asyncio
import sqlite3
import textwrap

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import hookimpl
from ragassay.components import (
    Chunker,
    DatasetSource,
    Embedder,
    Generation,
    Generator,
    Judge,
    Metric,
    RAGSystem,
    Reranker,
    Retriever,
)
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run
from ragassay.models import Chunk, Document, Judgement, RAGOutput, Sample, ScoredChunk
from ragassay.plugin_manager import load_plugins
from ragassay.store.contexts import unpack


class LineChunker(Chunker):
    """One chunk per non-empty line."""

    name = "lines"

    def chunk(self, document):
        lines = [line for line in document.text.splitlines() if line.strip()]
        return [Chunk(id=f"{document.id}#{i}", document_id=document.id, text=t, index=i) for i, t in enumerate(lines)]


class LastRetriever(Retriever):
    """Returns the last k chunks (whatever the query)."""

    name = "last"

    def index(self, chunks):
        self.chunks = list(chunks)

    def retrieve(self, query, k):
        picked = list(reversed(self.chunks))[:k]
        return [ScoredChunk(chunk=c, score=1.0 / i, rank=i) for i, c in enumerate(picked, 1)]


class LongestReranker(Reranker):
    """Reorders candidates longest text first (ties: incoming order)."""

    name = "longest"

    def rerank(self, query, candidates, k):
        order = sorted(candidates, key=lambda h: -len(h.chunk.text))[:k]
        return [ScoredChunk(chunk=h.chunk, score=float(len(h.chunk.text)), rank=i) for i, h in enumerate(order, 1)]


class UpperGenerator(Generator):
    """Answers with the first context, upper-cased."""

    name = "upper"

    async def generate(self, request):
        return Generation(text=request.contexts[0].text.upper() if request.contexts else "")


class InlineOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = Field(2, description="How many samples to yield.")


class InlineSource(DatasetSource):
    """Samples and documents made up in code."""

    name = "inline"
    Options = InlineOptions

    def samples(self):
        for i in range(self.options.n):
            yield Sample(question_id=f"i{i}", question=f"what is line {i}?", reference_answers=[f"LINE {i}"])

    def documents(self):
        yield Document(id="doc", text="line 0, the longest line\nline 1\nline 2")


class Shout(Metric):
    """1.0 when the answer is upper case."""

    name = "shout"

    def score(self, sample, output):
        return float(output.answer.isupper())


class AlwaysJudge(Judge):
    """Rules every answer correct."""

    name = "always"

    async def judge(self, sample, output):
        return Judgement(judge=self.name, verdict="correct", score=1.0, explanation="always")


class TwoDims(Embedder):
    """Embeds a text as (length, vowels)."""

    name = "two_dims"

    def embed(self, texts):
        return [[float(len(t)), float(sum(ch in "aeiou" for ch in t))] for t in texts]


class EchoRAG(RAGSystem):
    """Answers with the question."""

    name = "parrot"

    async def answer(self, sample):
        return RAGOutput(answer=sample.question.upper(), retrieved=False)


class Kit:
    @hookimpl
    def register_chunkers(self, register):
        register(LineChunker)

    @hookimpl
    def register_retrievers(self, register):
        register(LastRetriever)

    @hookimpl
    def register_rerankers(self, register):
        register(LongestReranker)

    @hookimpl
    def register_generators(self, register):
        register(UpperGenerator)

    @hookimpl
    def register_dataset_sources(self, register):
        register(InlineSource)

    @hookimpl
    def register_metrics(self, register):
        register(Shout)

    @hookimpl
    def register_judges(self, register):
        register(AlwaysJudge)

    @hookimpl
    def register_embedders(self, register):
        register(TwoDims)

    @hookimpl
    def register_rags(self, register):
        register(EchoRAG)


CONFIG = """
[dataset]
source = "kit/inline"
options = { n = 3 }
[systems.naive]
chunker = "kit/lines"
retriever = "kit/last"
generator = "kit/upper"
options = { top_k = 1 }
[systems.parrot]
rag = "kit/parrot"
[systems.reranked]
chunker = "kit/lines"
retriever = { name = "hybrid", options = { retrievers = ["kit/last", "keyword"], reranker = "kit/longest" } }
generator = "kit/upper"
options = { top_k = 1 }
[evaluation]
metrics = ["kit/shout", "exact_match"]
judges = ["kit/always"]
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    root = tmp_path_factory.mktemp("hooks")
    (root / "ragassay.toml").write_text(textwrap.dedent(CONFIG))
    host = load_plugins([("kit", Kit())])
    loaded = load_config(root)
    store = Project(loaded).open_store()
    asyncio.run(Runner(plan_run(loaded, host.registry), store).run())
    store.close()
    con = sqlite3.connect(root / "ragassay-results.db")
    yield host, con
    con.close()


def outputs(con, system):
    """question_id -> the stored output as a dict, its contexts resolved from the store's context texts."""
    texts = dict(con.execute("select key, text from context_texts"))
    rows = con.execute("select question_id, output_json from outputs where system = ? order by question_id", (system,))
    return {qid: unpack(raw, texts).model_dump(mode="json") for qid, raw in rows}


def test_hook_register_dataset_sources(stored):
    _, con = stored
    assert set(outputs(con, "naive")) == {"i0", "i1", "i2"}


def test_hook_register_chunkers(stored):
    _, con = stored
    assert {tuple(o["context_ids"]) for o in outputs(con, "naive").values()} == {("doc#2",)}


def test_hook_register_retrievers(stored):
    _, con = stored
    assert all(o["contexts"] == ["line 2"] for o in outputs(con, "naive").values())


def test_hook_register_generators(stored):
    _, con = stored
    assert {o["answer"] for o in outputs(con, "naive").values()} == {"LINE 2"}
    em = dict(
        con.execute(
            "select o.question_id, m.value from metric_values m join outputs o on o.id = m.output_id "
            "where o.system = 'naive' and m.metric = 'exact_match'"
        )
    )
    assert em == {"i0": 0.0, "i1": 0.0, "i2": 1.0}


def test_hook_register_rags(stored):
    _, con = stored
    assert outputs(con, "parrot")["i1"]["answer"] == "WHAT IS LINE 1?"


def test_hook_register_metrics(stored):
    _, con = stored
    assert con.execute("select min(value), count(*) from metric_values where metric = 'kit/shout'").fetchone() == (
        1.0,
        9,
    )


def test_hook_register_judges(stored):
    _, con = stored
    assert con.execute("select verdict, count(*) from judgements where judge = 'kit/always'").fetchone() == (
        "correct",
        9,
    )


def test_hook_register_embedders(stored):
    host, _ = stored
    info = host.registry.get("embedder", "kit/two_dims")
    assert info.cls().embed(["abc"]) == [[3.0, 1.0]]


def test_hook_register_rerankers(stored):
    host, con = stored
    assert host.registry.get("reranker", "kit/longest").cls is LongestReranker
    # hybrid fuses kit/last (last line first) and keyword, then kit/longest puts the longest line first
    reranked = outputs(con, "reranked")
    assert {tuple(o["context_ids"]) for o in reranked.values()} == {("doc#0",)}
    assert all(o["trace"]["retrieval"]["reranked"] is True for o in reranked.values())
