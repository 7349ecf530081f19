"""The recursive chunker: exact boundaries and overlap, character vs token units, title prefix, options."""

from __future__ import annotations

import pydantic
import pytest

from ragassay.models import Document
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.recursive_chunker import InfoChunker, KennewegChunker, RecursiveChunker, approximate_tokens

WORDS = "aaaa bbbb cccc dddd eeee"


def chunk(text: str, title: str = "", metadata: dict | None = None, **options):
    doc = Document(id="doc", text=text, title=title, metadata=metadata or {})
    return RecursiveChunker(RecursiveChunker.Options(**options)).chunk(doc)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("chunker", "recursive")
    assert info.plugin == "recursive_chunker"
    assert info.cls is RecursiveChunker


def test_exact_boundaries_with_overlap():
    chunks = chunk(WORDS, size=10, overlap=5)
    assert [c.text for c in chunks] == ["aaaa bbbb", "bbbb cccc", "cccc dddd", "dddd eeee"]
    assert [c.metadata["start"] for c in chunks] == [0, 5, 10, 15]
    assert all(WORDS[c.metadata["start"] :].startswith(c.text) for c in chunks)


def test_exact_boundaries_without_overlap():
    chunks = chunk(WORDS, size=10, overlap=0)
    assert [c.text for c in chunks] == ["aaaa bbbb", "cccc dddd", "eeee"]
    assert [c.metadata["start"] for c in chunks] == [0, 10, 20]


def test_ids_index_document_and_metadata_copy():
    metadata = {"url": "https://example.org/zürich"}
    chunks = chunk(WORDS, metadata=metadata, size=10, overlap=0)
    assert [c.id for c in chunks] == ["doc#0", "doc#1", "doc#2"]
    assert [c.index for c in chunks] == [0, 1, 2]
    assert {c.document_id for c in chunks} == {"doc"}
    assert chunks[1].metadata == {"url": "https://example.org/zürich", "start": 10}
    assert metadata == {"url": "https://example.org/zürich"}  # the document's metadata is not mutated


def test_paragraphs_are_preferred_split_points():
    text = "First paragraph here.\n\nSecond one, longer."
    assert [c.text for c in chunk(text, size=25, overlap=0)] == ["First paragraph here.", "Second one, longer."]


def test_token_unit_counts_words_and_punctuation():
    text = "Hello, world! Foo bar baz."
    assert approximate_tokens(text) == 8
    by_tokens = chunk(text, size=4, overlap=1, unit="tokens")
    assert [c.text for c in by_tokens] == ["Hello, world!", "Foo bar baz."]
    assert [c.metadata["start"] for c in by_tokens] == [0, 14]
    by_characters = chunk(text, size=4, overlap=1, unit="characters")
    assert len(by_characters) == 8
    assert all(len(c.text) <= 4 for c in by_characters)


def test_title_prefix_only_for_titled_documents():
    titled = chunk(WORDS, title="O'Brien in Zürich", size=10, overlap=0, title_prefix=True)
    assert titled[0].text == "Title: O'Brien in Zürich\naaaa bbbb"
    assert titled[2].text == "Title: O'Brien in Zürich\neeee"
    assert titled[1].metadata["start"] == 10  # offsets stay in document coordinates
    untitled = chunk(WORDS, size=10, overlap=0, title_prefix=True)
    assert untitled[0].text == "aaaa bbbb"
    assert chunk(WORDS, title="T", size=10, overlap=0)[0].text == "aaaa bbbb"  # off by default


def test_custom_separators():
    assert [c.text for c in chunk("x;y;z", size=3, overlap=0, separators=[";"])] == ["x;y", ";z"]


def test_empty_document_gives_no_chunks():
    assert chunk("", size=10, overlap=0) == []
    assert chunk("  \n\n ", size=10, overlap=0) == []


def test_deterministic():
    text = "Lorem ipsum dolor sit amet. " * 40
    assert chunk(text, size=50, overlap=10) == chunk(text, size=50, overlap=10)


@pytest.mark.parametrize("overlap", [100, 101])
def test_overlap_must_be_below_size(overlap):
    with pytest.raises(pydantic.ValidationError, match="overlap .* must be smaller than size"):
        RecursiveChunker.Options(size=100, overlap=overlap)


@pytest.mark.parametrize("bad", [{"unit": "words"}, {"size": 0}, {"overlap": -1}, {"chunk_size": 10}])
def test_bad_options_are_rejected(bad):
    with pytest.raises(pydantic.ValidationError):
        RecursiveChunker.Options(**bad)


def test_defaults():
    options = RecursiveChunker.Options()
    assert (options.size, options.overlap, options.unit, options.title_prefix) == (1024, 48, "characters", False)


def test_presets_are_registered_with_seed_settings():
    registry = load_plugins().registry
    assert registry.get("chunker", "kenneweg").cls is KennewegChunker
    assert registry.get("chunker", "info").cls is InfoChunker
    k, i = KennewegChunker.Options(), InfoChunker.Options()
    assert (k.size, k.overlap, k.unit, k.title_prefix) == (1024, 48, "characters", True)
    assert (i.size, i.overlap, i.unit, i.title_prefix) == (1024, 205, "tokens", False)


def test_presets_chunk_like_the_papers():
    text = "\n\n".join(f"Paragraph {n}. " + "word " * 60 for n in range(40))  # 40 x 63 approximate tokens
    document = Document(id="wiki/x", title="X (band)", text=text)
    chunks = KennewegChunker().chunk(document)
    assert len(chunks) > 2 and all(c.text.startswith("Title: X (band)\n") for c in chunks)
    assert all(len(c.text) - len("Title: X (band)\n") <= 1024 for c in chunks)
    info_chunks = InfoChunker().chunk(document)
    assert len(info_chunks) == 3 and not info_chunks[0].text.startswith("Title:")
    assert info_chunks[1].text.split("\n\n")[0] in info_chunks[0].text  # consecutive chunks overlap
    assert KennewegChunker(KennewegChunker.Options(size=300, overlap=10)).chunk(document)[0].text.count("word") < 60
