"""Query embeddings: micro-batched across concurrent callers, computed once per run and embedder, batch-invariant."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest

import ragassay
from ragassay import Encoded, hookimpl
from ragassay.plugins.dense.batching import MicroBatcher
from ragassay.plugins.dense.queries import QueryEncoder, encoder_stats, query_encoder

from conftest import write_project
from dense_support import HashingEmbedder, context, dense, make_chunks, make_context, minilm_folder  # noqa: F401


class Recorder:
    """A batch function that records its batches (and can be held until released)."""

    def __init__(self, fail_on: str | None = None):
        self.batches: list[list[str]] = []
        self.fail_on = fail_on
        self.release = threading.Event()
        self.release.set()

    def __call__(self, texts):
        self.release.wait(30)
        self.batches.append(list(texts))
        if self.fail_on in texts:
            raise ValueError(f"cannot embed {self.fail_on!r}")
        return [text.upper() for text in texts]


def test_concurrent_texts_run_in_few_batches_and_each_gets_its_own_result():
    recorder = Recorder()
    batcher = MicroBatcher(recorder, max_batch=4, window_s=0.01)

    async def main():
        return await asyncio.gather(*(batcher.submit(f"q{i}") for i in range(10)))

    assert asyncio.run(main()) == [f"Q{i}" for i in range(10)]
    assert sorted(t for batch in recorder.batches for t in batch) == sorted(f"q{i}" for i in range(10))
    assert max(len(batch) for batch in recorder.batches) <= 4
    assert len(recorder.batches) == batcher.batches_run == 3  # 10 texts submitted together: 4 + 4 + 2


def test_a_text_asked_twice_while_waiting_is_embedded_once():
    recorder = Recorder()
    batcher = MicroBatcher(recorder, max_batch=8, window_s=0.01)

    async def main():
        return await asyncio.gather(*(batcher.submit(t) for t in ("a", "b", "a", "a", "b")))

    assert asyncio.run(main()) == ["A", "B", "A", "A", "B"]
    assert sorted(t for batch in recorder.batches for t in batch) == ["a", "b"]


def test_the_queue_is_bounded_callers_wait_for_room():
    recorder = Recorder()
    recorder.release.clear()  # the first batch is held in its thread
    batcher = MicroBatcher(recorder, max_batch=1, window_s=0, max_pending=2)

    async def main():
        tasks = [asyncio.ensure_future(batcher.submit(f"q{i}")) for i in range(5)]
        for _ in range(20):
            await asyncio.sleep(0)
        waiting = len(batcher._futures)  # texts admitted to the queue while the first batch is held
        recorder.release.set()
        return waiting, await asyncio.gather(*tasks)

    waiting, results = asyncio.run(main())
    assert waiting == 2
    assert results == [f"Q{i}" for i in range(5)]


def test_a_failing_batch_fails_its_callers_and_the_batcher_goes_on():
    recorder = Recorder(fail_on="bad")
    batcher = MicroBatcher(recorder, max_batch=8, window_s=0.01)

    async def main():
        first = await asyncio.gather(batcher.submit("bad"), batcher.submit("ok"), return_exceptions=True)
        return first, await batcher.submit("fine")

    (bad, ok), fine = asyncio.run(main())
    assert isinstance(bad, ValueError) and isinstance(ok, ValueError) and fine == "FINE"


def test_a_cancelled_caller_leaves_the_shared_result_to_the_others():
    recorder = Recorder()
    recorder.release.clear()
    batcher = MicroBatcher(recorder, max_batch=8, window_s=0)

    async def main():
        first = asyncio.ensure_future(batcher.submit("q"))
        second = asyncio.ensure_future(batcher.submit("q"))
        await asyncio.sleep(0.01)
        first.cancel()
        recorder.release.set()
        return await second

    assert asyncio.run(main()) == "Q"


def test_a_new_event_loop_starts_afresh():
    batcher = MicroBatcher(Recorder(), window_s=0)
    assert asyncio.run(batcher.submit("x")) == "X"
    assert asyncio.run(batcher.submit("y")) == "Y"


def test_query_encoder_embeds_each_text_once_and_keeps_a_bounded_cache(context):
    embedder = context.build("embedder", "fake/hashing")
    encoder = QueryEncoder(embedder, cache_size=3)

    async def main():
        texts = ["honey bees", "stars", "honey bees", "rivers", "stars"]
        return await asyncio.gather(*(encoder.aencode(t) for t in texts))

    vectors = asyncio.run(main())
    assert encoder_stats(encoder)["texts"] == 3 and encoder.calls == 1  # one forward pass for all five callers
    assert np.array_equal(vectors[0].vector, vectors[2].vector)
    assert np.allclose(vectors[0].vector, np.asarray(embedder.embed(["honey bees"]))[0])
    assert not vectors[0].vector.flags.writeable
    assert encoder.encode("stars") is vectors[1] and encoder.texts_encoded == 3  # sync path: from the cache
    encoder.encode("a fourth text")  # the cache holds 3: the least recently used ("honey bees") goes
    assert encoder.cached("honey bees") is None and encoder.cached("stars") is not None
    assert encoder.texts_encoded == 4


def test_one_encoder_per_embedder_identity_and_run(tmp_path):
    context = make_context(tmp_path)
    same = [context.build("embedder", "fake/hashing") for _ in range(2)]
    other = context.build("embedder", {"name": "fake/hashing", "options": {"salt": "x"}})
    assert query_encoder(context, same[0]) is query_encoder(context, same[1])
    assert query_encoder(context, other) is not query_encoder(context, same[0])
    assert query_encoder(make_context(tmp_path), same[0]) is not query_encoder(context, same[0])  # another run


class NoisyEmbedder(HashingEmbedder):
    """Adds batch-dependent float noise to every vector (a model whose output moves with its batch's padding)."""

    name = "noisy"

    def encode_queries(self, texts):
        base = np.asarray(self.embed(list(texts)), dtype=np.float32)
        noise = np.float32(1e-7) * (len(texts) % 5) * (np.arange(base.shape[1], dtype=np.float32) % 3 - 1)
        return Encoded(base + noise, [None] * len(texts), [False] * len(texts))


class NoisyPlugin:
    @hookimpl
    def register_embedders(self, register):
        register(NoisyEmbedder)


def test_ranking_does_not_depend_on_the_batch_a_query_falls_in(tmp_path):
    from ragassay.plugin_manager import load_plugins

    texts = ["bees honey hive", "bees honey hive", "stars light", "honey flowers", "bees"] * 3
    chunks = make_chunks(texts)
    queries = ["bees honey", "honey", "stars bees"]

    def ranking(batch_of: int):
        """The hits of each query when the queries are asked in groups of ``batch_of`` concurrent units."""
        context = make_context(tmp_path, load_plugins([("t", NoisyPlugin())]).registry)
        retriever = context.build("retriever", {"name": "dense", "options": {"embedder": "t/noisy", "cache": False}})
        retriever.index(chunks)

        async def main():
            out = []
            for start in range(0, len(queries), batch_of):
                group = queries[start : start + batch_of]
                out += await asyncio.gather(*(retriever.aretrieve(q, 8) for q in group))
            return out

        results = asyncio.run(main())
        return [[(h.chunk.id, h.score, h.rank) for h in hits] for hits in results]

    alone, together = ranking(1), ranking(3)
    assert alone == together
    first = alone[0]
    tied = [(cid, score) for cid, score, _ in first if score == first[0][1]]
    assert len(tied) >= 2 and [cid for cid, _ in tied] == sorted((cid for cid, _ in tied), key=lambda c: int(c[1:-2]))
    assert all(score == round(score, 6) for hits in alone for _, score, _ in hits)


@pytest.mark.slow
def test_local_model_gives_a_query_the_same_vector_whatever_its_batch(tmp_path):
    folder = minilm_folder()
    context = make_context(tmp_path)
    embedder = context.build("embedder", {"name": "local", "options": {"model": str(folder), "batch_size": 4}})
    queries = [
        "what do bees make",
        "how do salmon find the river where they were born after years at sea",
        "stars",
        "which telescope collects the most light from distant galaxies and how is it built",
        "honey",
        "what flows through Bern",
    ]
    alone = np.stack([embedder.encode_queries([q]).vectors[0] for q in queries])
    together = embedder.encode_queries(queries).vectors
    shuffled = embedder.encode_queries(queries[::-1] + ["a much longer query " * 12]).vectors[: len(queries)][::-1]
    for batch in (together, shuffled):
        assert np.abs(batch - alone).max() <= 1e-6
    padded = embedder.encode(queries).vectors  # the corpus path pads to each batch's longest text
    assert np.abs(padded - alone).max() <= 1e-6
    assert np.allclose(np.linalg.norm(alone, axis=1), 1.0, atol=1e-5)


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, recording every text embedded as a query."""

    name = "counting"
    queries: list[str] = []

    def encode_queries(self, texts):
        type(self).queries += list(texts)
        return super().encode_queries(texts)


class CountingPlugin:
    @hookimpl
    def register_embedders(self, register):
        register(CountingEmbedder)


RUN_CONFIG = """
    [project]
    name = "shared-queries"
    concurrency = 4

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = { path = "qa.jsonl" }

    [defaults]
    chunker = { name = "recursive", options = { size = 200, overlap = 20 } }

    [systems.dense]
    retriever = { name = "dense", options = { embedder = "t/counting" } }
    generator = "extractive"
    options = { top_k = 2 }

    [systems.dense_hnsw]
    extends = "dense"
    retriever = { name = "dense", options = { embedder = "t/counting", index = "hnsw" } }

    [systems.hybrid]
    extends = "dense"

    [systems.hybrid.retriever]
    name = "hybrid"

    [[systems.hybrid.retriever.options.retrievers]]
    name = "bm25"

    [[systems.hybrid.retriever.options.retrievers]]
    name = "dense"
    options.embedder = "t/counting"

    [evaluation]
    metrics = ["context_mrr"]
"""


def test_a_run_with_dense_and_hybrid_embeds_each_distinct_question_once(tmp_path):
    CountingEmbedder.queries = []
    config = write_project(tmp_path, RUN_CONFIG)
    questions = [line for line in (tmp_path / "qa.jsonl").read_text().splitlines() if line]
    run = ragassay.run(config, plugins=[("t", CountingPlugin())])
    assert run.failed == 0 and run.completed == 3 * len(questions)
    import json

    distinct = {json.loads(line)["question"] for line in questions}
    assert sorted(CountingEmbedder.queries) == sorted(distinct)  # 3 systems, each question embedded once
