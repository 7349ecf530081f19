"""What the dense retriever needs from an embedder, through the declared :class:`ragassay.Embedder` methods.

Every embedder has :meth:`~ragassay.Embedder.encode` (vectors plus per-text token counts and truncation flags;
the default wraps ``embed``), ``dimension`` (known without embedding, or None) and
:meth:`~ragassay.Embedder.cache_identity` (what decides the vectors; the default is all the options).
ragassay's embedders refine all three; a third-party embedder that only implements ``embed`` works too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragassay import Embedder, Encoded, ProviderError, require

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Encoded", "dimension", "encode", "identity", "l2_normalize"]


def encode(embedder: Embedder, texts: Sequence[str], *, queries: bool = False) -> Encoded:
    """Embed ``texts`` with ``embedder`` as an (n, d) float32 array; checks that one vector came per text.

    ``queries``: through :meth:`~ragassay.Embedder.encode_queries` (each text's vector independent of the
    others in the call), else :meth:`~ragassay.Embedder.encode`.
    """
    np = require("numpy", "dense")
    texts = list(texts)
    result = embedder.encode_queries(texts) if queries else embedder.encode(texts)
    vectors = np.asarray(result.vectors, dtype=np.float32)
    if vectors.ndim != 2 or vectors.shape[0] != len(texts):
        raise ProviderError(
            f"embedder '{embedder.name}' returned {vectors.shape[0] if vectors.ndim else 0} vectors of shape "
            f"{tuple(vectors.shape)} for {len(texts)} texts; expected one vector per text"
        )
    if not np.isfinite(vectors).all():
        raise ProviderError(f"embedder '{embedder.name}' returned NaN or infinite values")
    result.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    return result


def identity(embedder: Embedder) -> dict[str, Any]:
    """What decides the vectors of ``embedder``: part of the dense cache key."""
    return {
        "embedder": embedder.name,
        "class": f"{type(embedder).__module__}.{type(embedder).__qualname__}",
        **embedder.cache_identity(),
    }


def dimension(embedder: Embedder) -> int | None:
    """The embedder's vector size when it can tell without embedding, else None."""
    value = embedder.dimension
    return value if isinstance(value, int) and value > 0 else None


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    np = require("numpy", "dense")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
