"""Dense retrieval: embedders (local transformers, OpenAI), FAISS indexes with a persistent cache.

Registers the ``dense`` retriever, the ``local`` and ``openai`` embedders and the seed chunking presets
``kenneweg`` and ``info``. Heavy libraries (torch, transformers, faiss, openai) are imported on first use.
See docs/retrieval.md.
"""

from __future__ import annotations

from ragassay.plugin_manager import hookimpl

from .local import LocalEmbedder
from .openai_embedder import OpenAIEmbedder
from .presets import InfoChunker, KennewegChunker
from .retriever import DenseRetriever

__all__ = ["DenseRetriever", "InfoChunker", "KennewegChunker", "LocalEmbedder", "OpenAIEmbedder"]


@hookimpl
def register_embedders(register):
    """Register the local and OpenAI embedders."""
    register(LocalEmbedder)
    register(OpenAIEmbedder)


@hookimpl
def register_retrievers(register):
    """Register the dense retriever."""
    register(DenseRetriever)


@hookimpl
def register_chunkers(register):
    """Register the seed chunking presets."""
    register(KennewegChunker)
    register(InfoChunker)
