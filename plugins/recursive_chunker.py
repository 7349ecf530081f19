"""The ``recursive`` chunker: LangChain's RecursiveCharacterTextSplitter behind the Chunker contract.

The splitter tries its separators in order (paragraphs, lines, spaces, characters by default) and merges
the pieces into chunks of at most ``size`` units, consecutive chunks sharing up to ``overlap`` units.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import Chunk, Chunker, Document, MissingDependencyError, hookimpl

_TOKEN = re.compile(r"\w+|[^\w\s]")


def approximate_tokens(text: str) -> int:
    """Approximate word-level token count: runs of word characters plus single punctuation marks.

    Not a model tokenizer (subword tokenizers usually give more tokens); it is cheap and deterministic.
    """
    return len(_TOKEN.findall(text))


class RecursiveChunker(Chunker):
    """Splits documents recursively on paragraphs, lines and words (LangChain's recursive splitter)."""

    name = "recursive"

    class Options(BaseModel):
        """Options of the recursive chunker."""

        model_config = ConfigDict(extra="forbid")

        size: int = Field(1024, ge=1, description="Maximum chunk length, in `unit`s (title prefix not counted).")
        overlap: int = Field(48, ge=0, description="Length shared by consecutive chunks, in `unit`s; below `size`.")
        unit: Literal["characters", "tokens"] = Field(
            "characters",
            description="How length is measured: characters, or approximate word-level tokens "
            "(count of \\w+ runs and punctuation marks; not a model tokenizer).",
        )
        title_prefix: bool = Field(
            False, description="Start each chunk with 'Title: <document title>' on its own line (titled documents)."
        )
        separators: list[str] | None = Field(
            None, description="Separators tried in order; default ['\\n\\n', '\\n', ' ', '']."
        )

        @model_validator(mode="after")
        def _overlap_below_size(self) -> RecursiveChunker.Options:
            if self.overlap >= self.size:
                raise ValueError(
                    f"overlap ({self.overlap}) must be smaller than size ({self.size}); lower overlap or raise size"
                )
            return self

    def chunk(self, document: Document) -> list[Chunk]:
        """Return the chunks of ``document`` in order, with ids ``<doc id>#<i>`` and a ``start`` offset."""
        if not document.text.strip():
            return []
        pieces = self._splitter().split_text(document.text)
        starts = self._start_offsets(document.text, pieces)
        chunks = []
        for i, (piece, start) in enumerate(zip(pieces, starts)):
            metadata = dict(document.metadata)
            if start is not None:
                metadata["start"] = start
            if self.options.title_prefix and document.title:
                piece = f"Title: {document.title}\n{piece}"
            chunks.append(
                Chunk(id=f"{document.id}#{i}", document_id=document.id, text=piece, index=i, metadata=metadata)
            )
        return chunks

    def _splitter(self):
        """Build (once) the LangChain splitter configured from the options."""
        splitter = getattr(self, "_cached_splitter", None)
        if splitter is None:
            try:
                from langchain_text_splitters import RecursiveCharacterTextSplitter
            except ImportError as exc:  # pragma: no cover - it is a dependency of ragassay
                raise MissingDependencyError(
                    f"the recursive chunker needs langchain-text-splitters ({exc}). "
                    "Install it with: pip install langchain-text-splitters"
                ) from exc
            opts = self.options
            splitter = RecursiveCharacterTextSplitter(
                separators=opts.separators,
                chunk_size=opts.size,
                chunk_overlap=opts.overlap,
                length_function=approximate_tokens if opts.unit == "tokens" else len,
            )
            self._cached_splitter = splitter
        return splitter

    def _start_offsets(self, text: str, pieces: list[str]) -> list[int | None]:
        """Character offset of each piece in ``text`` (None if it cannot be found verbatim).

        Each piece starts after the previous one; in character units it also starts no earlier than
        ``overlap`` characters before the previous piece ends, which disambiguates repeated text.
        """
        starts: list[int | None] = []
        prev_start, prev_end = -1, 0
        for piece in pieces:
            lower = prev_start + 1
            if self.options.unit == "characters":
                lower = max(lower, prev_end - self.options.overlap)
            found = text.find(piece, lower)
            if found < 0:
                starts.append(None)
                continue
            starts.append(found)
            prev_start, prev_end = found, found + len(piece)
        return starts


# Chunking presets of the seed papers: the recursive chunker with other defaults.
# Chunking presets of the seed papers, as chunkers: ``kenneweg`` and ``info``.
#
# Both are the ``recursive`` chunker with other defaults (every option can still be overridden):
#
# * ``kenneweg`` — Kenneweg et al. (seeds/003, naive RAG): recursive chunking, at most 1024 characters,
#   48 characters overlap, the article title prefixed to every chunk; used with top-5 cosine retrieval.
# * ``info`` — the INFO thesis (seeds/002, Table 4.1): 1024-token chunks with a 20% overlap (205 tokens);
#   used with top-3 retrieval. Tokens are ragassay's approximate word tokens (``unit = "tokens"``), not
#   the tiktoken tokens of the thesis' pipeline.


class KennewegChunker(RecursiveChunker):
    """Kenneweg et al. preset: recursive, 1024 characters, 48 overlap, title prefix (seeds/003)."""

    name = "kenneweg"

    class Options(RecursiveChunker.Options):
        """Options of the kenneweg preset (recursive chunker options, seed defaults)."""

        size: int = Field(1024, ge=1, description="Maximum chunk length in `unit`s (the paper: 1024 characters).")
        overlap: int = Field(48, ge=0, description="Length shared by consecutive chunks (the paper: 48 characters).")
        unit: Literal["characters", "tokens"] = Field("characters", description="How length is measured.")
        title_prefix: bool = Field(True, description="Prefix 'Title: <document title>' to every chunk (the paper).")


class InfoChunker(RecursiveChunker):
    """INFO thesis preset: 1024 tokens with 20% overlap (seeds/002, Table 4.1)."""

    name = "info"

    class Options(RecursiveChunker.Options):
        """Options of the info preset (recursive chunker options, seed defaults)."""

        size: int = Field(1024, ge=1, description="Maximum chunk length in `unit`s (the thesis: 1024 tokens).")
        overlap: int = Field(205, ge=0, description="Length shared by consecutive chunks (20% of 1024, rounded).")
        unit: Literal["characters", "tokens"] = Field(
            "tokens", description="How length is measured: approximate word-level tokens by default."
        )
        title_prefix: bool = Field(False, description="Prefix 'Title: <document title>' to every chunk.")


@hookimpl
def register_chunkers(register):
    """Register the recursive chunker and the seed presets ``kenneweg`` and ``info``."""
    register(RecursiveChunker)
    register(KennewegChunker)
    register(InfoChunker)
