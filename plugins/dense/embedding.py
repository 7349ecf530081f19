"""What the dense retriever needs from an embedder, for ragassay's embedders and any third-party one.

ragassay's embedders implement :meth:`encode` (vectors as one float32 array, plus per-text token counts and
truncation flags), ``dimension`` (known without embedding, or None) and ``cache_identity()`` (what decides
the vectors: model identity and the options that change them, not batch sizes or thread counts). A
third-party :class:`ragassay.Embedder` that only implements ``embed`` works too: :func:`encode` wraps it,
and its identity is its name and all its options.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

from ragassay.components import Embedder
from ragassay.errors import ProviderError, require

if TYPE_CHECKING:
    import numpy as np


@dataclasses.dataclass
class Encoded:
    """Vectors of some texts, in input order, with what the embedder saw of each text."""

    vectors: "np.ndarray"
    tokens: list[int | None]
    truncated: list[bool]
    max_tokens: int | None = None

    @property
    def truncated_count(self) -> int:
        return sum(self.truncated)


def encode(embedder: Embedder, texts: Sequence[str]) -> Encoded:
    """Embed ``texts`` with ``embedder`` as an (n, d) float32 array; checks that one vector came per text."""
    np = require("numpy", "dense")
    texts = list(texts)
    if hasattr(embedder, "encode"):
        result = embedder.encode(texts)
    else:
        vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
        result = Encoded(vectors, [None] * len(texts), [False] * len(texts))
    vectors = result.vectors
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
    own = getattr(embedder, "cache_identity", None)
    details = own() if callable(own) else {"options": embedder.options.model_dump(mode="json")}
    return {"embedder": embedder.name, "class": f"{type(embedder).__module__}.{type(embedder).__qualname__}",
            **details}


def dimension(embedder: Embedder) -> int | None:
    """The embedder's vector size when it can tell without embedding, else None."""
    value = getattr(embedder, "dimension", None)
    return value if isinstance(value, int) and value > 0 else None


def l2_normalize(vectors: "np.ndarray") -> "np.ndarray":
    """Rows scaled to unit length (zero rows stay zero)."""
    np = require("numpy", "dense")
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
