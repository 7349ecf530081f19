"""Chunking presets of the seed papers, as chunkers: ``kenneweg`` and ``info``.

Both are the ``recursive`` chunker with other defaults (every option can still be overridden):

* ``kenneweg`` — Kenneweg et al. (seeds/003, naive RAG): recursive chunking, at most 1024 characters,
  48 characters overlap, the article title prefixed to every chunk; used with top-5 cosine retrieval.
* ``info`` — the INFO thesis (seeds/002, Table 4.1): 1024-token chunks with a 20% overlap (205 tokens);
  used with top-3 retrieval. Tokens are ragassay's approximate word tokens (``unit = "tokens"``), not
  the tiktoken tokens of the thesis' pipeline.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragassay.plugins.recursive_chunker import RecursiveChunker


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
            "tokens", description="How length is measured: approximate word-level tokens by default.")
        title_prefix: bool = Field(False, description="Prefix 'Title: <document title>' to every chunk.")
