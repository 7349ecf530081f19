"""The document chunker: one chunk per document, id = document id, and the four title modes."""

from __future__ import annotations

import pydantic
import pytest

from ragassay import Document
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.document_chunker import DocumentChunker

TITLED = Document(id="d1", title="Waggle dance", text="Bees dance.", metadata={"topic": "bees"})
UNTITLED = Document(id="d2", title="", text="  Honey in summer. ")


def chunks(document: Document, **options):
    return DocumentChunker(DocumentChunker.Options(**options)).chunk(document)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("chunker", "document")
    assert (info.plugin, info.cls) == ("document_chunker", DocumentChunker)


def test_default_is_beirs_join():
    assert DocumentChunker.Options().title == "join"
    with pytest.raises(pydantic.ValidationError):
        DocumentChunker.Options(title="append")
    with pytest.raises(pydantic.ValidationError):
        DocumentChunker.Options(size=10)


@pytest.mark.parametrize(
    "mode, titled, untitled",
    [
        ("join", "Waggle dance Bees dance.", "Honey in summer."),  # BEIR: (title + " " + text).strip()
        ("prefix", "Title: Waggle dance\nBees dance.", "  Honey in summer. "),
        ("field", "Bees dance.", "  Honey in summer. "),
        ("drop", "Bees dance.", "  Honey in summer. "),
    ],
)
def test_title_modes(mode, titled, untitled):
    [chunk] = chunks(TITLED, title=mode)
    assert chunk.text == titled
    assert (chunk.id, chunk.document_id, chunk.index) == ("d1", "d1", 0)
    assert chunk.metadata == {"topic": "bees", "title": "Waggle dance"}  # every mode keeps the title aside
    [plain] = chunks(UNTITLED, title=mode)
    assert plain.text == untitled and "title" not in plain.metadata


def test_a_document_with_nothing_gives_no_chunk_and_a_title_alone_one():
    assert chunks(Document(id="e", text=" \n")) == []
    [chunk] = chunks(Document(id="t", title="Only a title", text=""), title="field")
    assert chunk.text == "" and chunk.metadata["title"] == "Only a title"
    assert chunks(Document(id="t", title="Only a title", text=""))[0].text == "Only a title"
