"""Dense retrieval: embedders (local transformers, OpenAI), FAISS indexes with a persistent cache.

Registers the ``dense`` retriever and the ``local`` and ``openai`` embedders. Heavy libraries (torch,
transformers, faiss, openai) are imported on first use. See docs/retrieval.md.
"""

from __future__ import annotations

from ragassay import hookimpl

from .local import LocalEmbedder
from .openai_embedder import OpenAIEmbedder
from .retriever import DenseRetriever

__all__ = ["DenseRetriever", "LocalEmbedder", "OpenAIEmbedder"]


@hookimpl
def register_embedders(register):
    """Register the local and OpenAI embedders."""
    register(LocalEmbedder)
    register(OpenAIEmbedder)


@hookimpl
def register_retrievers(register):
    """Register the dense retriever."""
    register(DenseRetriever)
