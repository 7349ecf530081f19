"""FAISS indexes for the dense retriever: exact inner product (flat), HNSW and IVF-Flat.

All three use the inner-product metric, so on L2-normalised vectors the score is the cosine similarity.
``flat`` is exact; ``hnsw`` (Malkov & Yashunin 2018) and ``ivf`` (inverted lists over k-means cells) are
approximate and faster on large corpora. Build parameters (``hnsw_m``, ``ef_construction``, ``ivf_nlist``)
decide the index and are part of its cache key; search parameters (``ef_search``, ``ivf_nprobe``) are set
after loading and can change without a rebuild.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import require

if TYPE_CHECKING:
    import numpy as np


class IndexOptions(BaseModel):
    """Which FAISS index to build and how to search it."""

    model_config = ConfigDict(extra="forbid")

    index: Literal["flat", "hnsw", "ivf"] = Field(
        "flat", description="'flat': exact inner product; 'hnsw': graph index; 'ivf': inverted lists (IVF-Flat)."
    )
    hnsw_m: int = Field(32, ge=2, description="HNSW: neighbours per node (more: better recall, more memory).")
    ef_construction: int = Field(
        40,
        ge=1,
        description="HNSW: candidate list size while building (FAISS default 40; higher: better graph, slower build).",
    )
    ef_search: int = Field(64, ge=1, description="HNSW: candidate list size while searching (at least k is used).")
    ivf_nlist: int | None = Field(None, ge=1, description="IVF: number of cells; None: 4·sqrt(n), at most n/39.")
    ivf_nprobe: int = Field(16, ge=1, description="IVF: cells visited per query.")
    threads: int | None = Field(None, ge=1, description="FAISS OpenMP threads (None: FAISS default).")

    def build_params(self, count: int) -> dict[str, Any]:
        """The parameters that decide the built index (its cache key), for ``count`` vectors."""
        if self.index == "hnsw":
            return {"index": "hnsw", "m": self.hnsw_m, "ef_construction": self.ef_construction}
        if self.index == "ivf":
            return {"index": "ivf", "nlist": self.nlist(count)}
        return {"index": "flat"}

    def nlist(self, count: int) -> int:
        """IVF cells for ``count`` vectors: the option, else 4·sqrt(n) capped so each cell trains on 39 points."""
        if self.ivf_nlist:
            return max(1, min(self.ivf_nlist, count))
        return max(1, min(int(4 * math.sqrt(count)), count // 39 or 1))


def faiss_module(threads: int | None = None):
    """Import faiss (the ``dense`` extra) and apply the thread setting."""
    faiss = require("faiss", "dense", "the dense retriever")
    if threads:
        faiss.omp_set_num_threads(threads)
    return faiss


def build(vectors: np.ndarray, opts: IndexOptions):
    """A FAISS index holding ``vectors`` (float32, row i gets id i)."""
    faiss = faiss_module(opts.threads)
    count, dim = vectors.shape
    if opts.index == "hnsw":
        index = faiss.IndexHNSWFlat(dim, opts.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = opts.ef_construction
    elif opts.index == "ivf":
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, opts.nlist(count), faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
    else:
        index = faiss.IndexFlatIP(dim)
    index.add(vectors)
    return index


def configure_search(index, opts: IndexOptions, k: int = 0) -> None:
    """Set the search-time parameters of ``index``."""
    faiss = faiss_module(opts.threads)
    if opts.index == "hnsw":
        faiss.downcast_index(index).hnsw.efSearch = max(opts.ef_search, k)
    elif opts.index == "ivf":
        faiss.extract_index_ivf(index).nprobe = opts.ivf_nprobe


def search(index, queries: np.ndarray, k: int, opts: IndexOptions) -> tuple[np.ndarray, np.ndarray]:
    """Scores and row ids of the ``k`` best vectors for each query row (ids -1 where fewer exist)."""
    configure_search(index, opts, k)
    return index.search(queries, k)


def serialize(index) -> bytes:
    """The index as bytes (FAISS' own format)."""
    return faiss_module().serialize_index(index).tobytes()


def deserialize(data: bytes):
    """An index from :func:`serialize` bytes."""
    np = require("numpy", "dense")
    return faiss_module().deserialize_index(np.frombuffer(data, dtype=np.uint8))
