"""The dense retriever reports its corpus embedding as it goes, its cache hits, and truncation that matters."""

from __future__ import annotations

import logging

from ragassay import Encoded, hookimpl
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.dense.retriever import EMBED_BLOCK, MODEL_PHASE, TRUNCATION_WARN_SHARE

from dense_support import HashingEmbedder, make_chunks, make_context


class Watching(HashingEmbedder):
    """The hashing embedder, noting at each call the progress the run had shown so far."""

    name = "watching"
    events: list = []
    seen_at_call: list[int] = []

    def embed(self, texts):
        type(self).seen_at_call.append(max((e.done for e in self.events if e.phase == "corpus embedding"), default=-1))
        return super().embed(texts)


class Truncating(HashingEmbedder):
    """The hashing embedder with a limit of 4 words: longer texts are reported truncated."""

    name = "truncating"

    def encode(self, texts):
        texts = list(texts)
        counts = [len(t.split()) for t in texts]
        return Encoded(self.embed(texts), counts, [c > 4 for c in counts], 4)


class Warmed(HashingEmbedder):
    """The hashing embedder, counting calls to warm() and to embed()."""

    name = "warmed"
    seen: list[str] = []

    events: list = []
    at_warm: list = []

    def warm(self):
        type(self).seen.append("warm")
        type(self).at_warm.append([(e.phase, e.done) for e in self.events])

    def embed(self, texts):
        type(self).seen.append("embed")
        return super().embed(texts)


class Plugin:
    @hookimpl
    def register_embedders(self, register):
        register(Watching)
        register(Truncating)
        register(Warmed)


def context_with_events(tmp_path):
    context = make_context(tmp_path, load_plugins([("t", Plugin())]).registry)
    events, warnings = [], []
    context.observe(events.append, warnings.append)
    return context, events, warnings


def build(context, embedder, chunks, **options):
    retriever = context.build("retriever", {"name": "dense", "options": {"embedder": embedder, **options}})
    retriever.index(chunks)
    return retriever


def test_corpus_embedding_is_reported_before_it_finishes(tmp_path):
    context, events, _ = context_with_events(tmp_path)
    Watching.events, Watching.seen_at_call = events, []
    total = 2 * EMBED_BLOCK + 5
    chunks = make_chunks([f"text number {i} about bees" for i in range(total)])
    build(context, "t/watching", chunks)
    embedding = [e for e in events if e.phase == "corpus embedding"]
    # every block after the first was embedded after the blocks before it had been reported
    assert Watching.seen_at_call[:3] == [0, EMBED_BLOCK, 2 * EMBED_BLOCK]
    assert [e.done for e in embedding] == [0, EMBED_BLOCK, 2 * EMBED_BLOCK, total]
    assert embedding[-1].finished and embedding[-1].unit == "chunks"
    index = [e for e in events if e.phase == "index (dense)"]
    assert index[0].done == 0 and index[-1].finished and events.index(index[0]) < events.index(embedding[0])


def test_cache_hits_are_reported(tmp_path):
    context, events, _ = context_with_events(tmp_path)
    build(context, "t/watching", make_chunks(), index="hnsw", hnsw_m=4)
    assert [e.note for e in events if e.phase == "hnsw index"] == ["", ""]
    events.clear()
    build(context, "t/watching", make_chunks(), index="hnsw", hnsw_m=4)
    hits = [(e.phase, e.done, e.note) for e in events if e.note]
    assert hits == [("corpus embedding", 6, "cache hit"), ("hnsw index", 6, "cache hit")]


def test_truncating_a_large_share_of_the_corpus_is_a_warning_with_the_share_and_the_fix(tmp_path):
    context, _, warnings = context_with_events(tmp_path)
    long = "one two three four five six"
    chunks = make_chunks([long] * 3 + ["short text"] * 17)  # 15% truncated
    retriever = build(context, "t/truncating", chunks, cache=False)
    assert retriever.stats["truncated_chunks"] == 3
    assert len(warnings) == 1 and warnings == context.warnings
    assert "3 of 20 chunks (15%)" in warnings[0] and "4-token limit" in warnings[0]
    assert 'unit = "tokens"' in warnings[0] and "longer limit" in warnings[0]


def test_truncating_a_small_share_is_only_logged(tmp_path, caplog):
    context, _, warnings = context_with_events(tmp_path)
    short = int(1 / TRUNCATION_WARN_SHARE) + 5
    chunks = make_chunks(["one two three four five six"] + ["short text"] * short)
    with caplog.at_level(logging.INFO, logger="ragassay.dense"):
        build(context, "t/truncating", chunks, cache=False)
    assert warnings == [] and context.warnings == []
    assert "1 chunk(s)" in caplog.text and "truncated" in caplog.text


def test_the_embedder_is_warmed_once_the_index_is_ready_even_from_the_cache(tmp_path):
    """A cached index embeds nothing while building: the model must still be loaded before the first unit, so
    that its loading time is not counted in the first unit's latency."""
    context, _, _ = context_with_events(tmp_path)
    Warmed.seen = []
    build(context, "t/warmed", make_chunks())
    assert Warmed.seen == ["warm", "embed"]  # loaded before the corpus embedding, not again after the index
    Warmed.seen = []
    build(context, "t/warmed", make_chunks())  # vectors from the cache: no embedding, still warmed
    assert Warmed.seen == ["warm"]


def test_the_model_load_is_its_own_phase_before_the_corpus_embedding_counts_chunks(tmp_path):
    """A local model takes seconds to load: reported inside the corpus embedding, it showed as 'corpus embedding
    0/13 chunks' with a rate that was the load time (issue 38, item 12)."""
    context, events, _ = context_with_events(tmp_path)
    Warmed.seen, Warmed.events, Warmed.at_warm = [], events, []
    build(context, "t/warmed", make_chunks())
    phases = [(e.phase, e.done, e.total, e.unit) for e in events if e.phase in (MODEL_PHASE, "corpus embedding")]
    assert phases[:3] == [
        (MODEL_PHASE, 0, 1, "model"),
        (MODEL_PHASE, 1, 1, "model"),
        ("corpus embedding", 0, 6, "chunks"),
    ]
    (seen,) = Warmed.at_warm  # the load ran inside its own phase, before the embedding counted a chunk
    assert seen[-1] == (MODEL_PHASE, 0) and all(phase != "corpus embedding" for phase, _ in seen)
