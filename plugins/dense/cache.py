"""The dense retriever's on-disk cache: chunk embeddings and built FAISS indexes, verified before use.

Layout, under ``<project cache_dir>/dense/<key>/``::

    manifest.json            key material, count, dimension, sha256 of vectors.npy
    vectors.npy              the chunk embeddings (float32, one row per chunk, in chunk order)
    index-<ikey>.faiss       a built HNSW or IVF index (flat indexes are rebuilt from the vectors: a copy)
    index-<ikey>.json        its build parameters, size and sha256

``key`` = sha256 of (format version, chunk ids and texts in order, embedder identity): the corpus content
and the chunker settings in effect decide the chunks; the embedder identity is its name, model content and
the options that change vectors. ``ikey`` adds the index build parameters. Every file is written to a
temporary file and moved into place (``os.replace``), data before manifest. A load checks the manifest, the
checksum, the shape and the values; any mismatch is reported as a reason and the caller rebuilds: a
corrupted or partial entry is never used.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragassay import require

if TYPE_CHECKING:
    import numpy as np

FORMAT_VERSION = 1


def embeddings_key(chunks: Sequence[Any], embedder_identity: dict[str, Any]) -> str:
    """Cache key of the embeddings of ``chunks`` (objects with ``id`` and ``text``) by one embedder."""
    digest = hashlib.sha256(f"ragassay-dense-v{FORMAT_VERSION}\x00".encode())
    for chunk in chunks:
        digest.update(chunk.id.encode("utf-8") + b"\x00" + chunk.text.encode("utf-8") + b"\x00")
    digest.update(json.dumps(embedder_identity, sort_keys=True, default=str).encode("utf-8"))
    return digest.hexdigest()


def index_key(key: str, build_params: dict[str, Any]) -> str:
    """Cache key of an index built over the embeddings ``key`` with ``build_params``."""
    return hashlib.sha256(f"{key}\x00{json.dumps(build_params, sort_keys=True)}".encode()).hexdigest()[:24]


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class CacheMiss(Exception):
    """A cache entry is absent or unusable; the message says why."""


class DenseCache:
    """Embeddings and indexes under ``folder`` (normally ``<cache_dir>/dense``)."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def entry(self, key: str) -> Path:
        return self.folder / key

    # -- embeddings ----------------------------------------------------------------------------

    def load_vectors(self, key: str, count: int) -> np.ndarray:
        """The cached vectors of ``key``; raises :class:`CacheMiss` with the reason when unusable."""
        manifest = self._manifest(self.entry(key) / "manifest.json", key)
        data = self._verified(self.entry(key) / "vectors.npy", manifest["sha256"])
        np = require("numpy", "dense")
        try:
            vectors = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            raise CacheMiss(f"vectors.npy cannot be read ({exc})") from None
        expected = (count, manifest.get("dim"))
        if vectors.dtype != np.float32 or vectors.shape != expected or manifest.get("count") != count:
            raise CacheMiss(f"vectors are {vectors.dtype} {vectors.shape}, manifest and corpus say {expected}")
        if not np.isfinite(vectors).all():
            raise CacheMiss("vectors contain NaN or infinite values")
        return vectors

    def save_vectors(self, key: str, vectors: np.ndarray, material: dict[str, Any]) -> None:
        """Store ``vectors`` under ``key`` (data first, then the manifest that vouches for it)."""
        np = require("numpy", "dense")
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
        data = buffer.getvalue()
        entry = self.entry(key)
        write_atomic(entry / "vectors.npy", data)
        manifest = {
            "format": FORMAT_VERSION,
            "key": key,
            "count": int(vectors.shape[0]),
            "dim": int(vectors.shape[1]),
            "dtype": "float32",
            "sha256": hashlib.sha256(data).hexdigest(),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "material": material,
        }
        write_atomic(entry / "manifest.json", json.dumps(manifest, indent=1, default=str).encode("utf-8"))

    # -- indexes -------------------------------------------------------------------------------

    def load_index(self, key: str, ikey: str) -> bytes:
        """The serialised index ``ikey`` of entry ``key``; raises :class:`CacheMiss` when unusable."""
        manifest = self._manifest(self.entry(key) / f"index-{ikey}.json", key)
        if manifest.get("index_key") != ikey:
            raise CacheMiss(f"index manifest is for {manifest.get('index_key')}, not {ikey}")
        return self._verified(self.entry(key) / f"index-{ikey}.faiss", manifest["sha256"])

    def save_index(self, key: str, ikey: str, data: bytes, params: dict[str, Any]) -> None:
        """Store a serialised index (data first, then its manifest)."""
        entry = self.entry(key)
        write_atomic(entry / f"index-{ikey}.faiss", data)
        manifest = {
            "format": FORMAT_VERSION,
            "key": key,
            "index_key": ikey,
            "params": params,
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
        }
        write_atomic(entry / f"index-{ikey}.json", json.dumps(manifest, indent=1).encode("utf-8"))

    # -- checks --------------------------------------------------------------------------------

    @staticmethod
    def _manifest(path: Path, key: str) -> dict[str, Any]:
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CacheMiss("absent") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise CacheMiss(f"{path.name} is corrupt ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION or manifest.get("key") != key:
            raise CacheMiss(f"{path.name} is for another key or format version")
        if not isinstance(manifest.get("sha256"), str):
            raise CacheMiss(f"{path.name} has no checksum")
        return manifest

    @staticmethod
    def _verified(path: Path, sha256: str) -> bytes:
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise CacheMiss(f"{path.name} is missing (partial entry)") from None
        if hashlib.sha256(data).hexdigest() != sha256:
            raise CacheMiss(f"{path.name} does not match its checksum (corrupted or partially written)")
        return data
