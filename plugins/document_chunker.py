"""The ``document`` chunker: one chunk per document, as BEIR and MTEB retrieve and judge whole documents.

The chunk's id is the document's id, so a ranking of chunks is a ranking of documents: the qrels' document
ids match ``context_ids`` themselves (the IR metrics at any ``level``, and Unitxt-compatible metrics, which
match ``context_ids`` only).

How the title enters the chunk (``title``):

* ``join`` (default): ``title + " " + text``, just the text when there is no title, stripped of surrounding
  white space: BEIR's and MTEB's convention for dense models (BEIR ``beir/retrieval/models/sentence_bert.py``,
  ``encode_corpus``: ``(doc["title"] + sep + doc["text"]).strip()`` with ``sep = " "``; MTEB's retrieval
  evaluator likewise), so dense figures compare with the published ones;
* ``prefix``: ``"Title: <title>\\n<text>"``, the boolean-agent paper's form (the ``recursive`` chunker's
  ``title_prefix``);
* ``field``: the text only; a multi-field scorer reads the title from ``chunk.metadata["title"]`` (BEIR's
  Elasticsearch BM25 scores title and text as separate fields);
* ``drop``: the text only, the title unused.

Whatever the mode, a titled document's chunk carries ``metadata["title"]`` (with the document's metadata). A
document with neither title nor text gives no chunk.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Chunk, Chunker, Document, hookimpl

TitleMode = Literal["join", "prefix", "field", "drop"]


def chunk_text(document: Document, title: TitleMode) -> str:
    """The text of ``document``'s single chunk under the title mode ``title``."""
    if title in ("field", "drop"):
        return document.text
    if title == "prefix":
        return f"Title: {document.title}\n{document.text}" if document.title else document.text
    return f"{document.title} {document.text}".strip() if document.title else document.text.strip()


class DocumentChunker(Chunker):
    """One chunk per whole document (chunk id = document id), the title joined, prefixed, kept aside or dropped."""

    name = "document"

    class Options(BaseModel):
        """Options of the document chunker."""

        model_config = ConfigDict(extra="forbid")

        title: TitleMode = Field(
            "join",
            description="'join': title + ' ' + text (BEIR/MTEB's convention for dense models); 'prefix': "
            "'Title: <title>' on its own line, then the text; 'field': the text only, the title in "
            "chunk.metadata['title'] for multi-field scorers; 'drop': the text only. Every mode keeps "
            "metadata['title'].",
        )

    def chunk(self, document: Document) -> list[Chunk]:
        """The document as one chunk (none when it has neither title nor text)."""
        if not document.text.strip() and not document.title.strip():
            return []
        metadata = dict(document.metadata)
        if document.title:
            metadata["title"] = document.title
        text = chunk_text(document, self.options.title)
        return [Chunk(id=document.id, document_id=document.id, text=text, index=0, metadata=metadata)]


@hookimpl
def register_chunkers(register):
    """Register the document chunker."""
    register(DocumentChunker)
