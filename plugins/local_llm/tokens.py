"""Prompt tokens of the ``local`` generator's model, counted with its own tokenizer (``ragassay estimate``).

A :class:`TokenCounter` counts one call's chat messages as the generator sends them: the model's chat template
with the generation prompt, tokenized without added special tokens (what ``LocalBackend`` does, so the count
equals the ``input_tokens`` the generator reports for that prompt). The parts of a prompt that an estimate only
assumes (the answer before it exists, retrieved contexts, a reply schema: runs of ``x``, see
:func:`ragassay.llm.split_assumed`) are counted as characters / 4.

The tokenizer loads on the first :meth:`TokenCounter.count`, once per process and model file: from a model this
process already loaded, else from the tokenizer saved under ``<cache_dir>/tokenizers/<hash>/`` (well under a
second), else from the GGUF file (a few seconds; then saved there).
"""

from __future__ import annotations

import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from ragassay import require
from ragassay.llm import split_assumed

from .loader import ModelSource, _loaded

log = logging.getLogger("ragassay.llm")
_tokenizers: dict[str, Any] = {}
_lock = threading.Lock()
LOAD_TIMES: dict[str, float] = {}  # the last tokenizer load: {"gguf_s": ...} or {"cached_s": ...}


class TokenCounter:
    """Counts prompt tokens with the tokenizer of ``source``'s model (loaded on the first :meth:`count`)."""

    def __init__(self, source: ModelSource, cache_root: Path | None):
        self.source, self.cache_root = source, cache_root
        self.name = f"{source.label} tokenizer"

    def count(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of one call's ``messages`` (role/content dicts) as the model receives them."""
        tokenizer = tokenizer_for(self.source, self.cache_root)
        plain = [{"role": m["role"], "content": str(m.get("content") or "")} for m in messages]
        with _lock:  # fast tokenizers are not thread-safe
            text = tokenizer.apply_chat_template(plain, add_generation_prompt=True, tokenize=False)
            known, assumed = split_assumed(text)
            return len(tokenizer(known, add_special_tokens=False)["input_ids"]) + assumed


def tokenizer_for(source: ModelSource, cache_root: Path | None) -> Any:
    """The tokenizer of ``source``'s model, loaded once per process (see the module docstring)."""
    path = str(source.folder.resolve() / (source.gguf_file or ""))
    with _lock:
        if path not in _tokenizers:
            loaded = next((m for key, m in _loaded.items() if key[0] == path), None)
            _tokenizers[path] = loaded.tokenizer if loaded is not None else _load(source, cache_root)
        return _tokenizers[path]


def _load(source: ModelSource, cache_root: Path | None) -> Any:
    transformers = require("transformers", "local", "counting the local model's tokens")
    start = time.perf_counter()
    if not source.gguf_file:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source.folder, local_files_only=True)
        LOAD_TIMES.clear()
        LOAD_TIMES["folder_s"] = time.perf_counter() - start
        return tokenizer
    saved = cache_root / "tokenizers" / source.fingerprint("tokenizer") if cache_root else None
    if saved is not None and (saved / "tokenizer_config.json").exists():
        tokenizer = transformers.AutoTokenizer.from_pretrained(saved, local_files_only=True)
        LOAD_TIMES.clear()
        LOAD_TIMES["cached_s"] = time.perf_counter() - start
        return tokenizer
    require("gguf", "local", "reading the GGUF file's tokenizer")
    kwargs = {"gguf_file": source.gguf_file, "local_files_only": True}
    tokenizer = transformers.AutoTokenizer.from_pretrained(source.folder, **kwargs)
    LOAD_TIMES.clear()
    LOAD_TIMES["gguf_s"] = time.perf_counter() - start
    if saved is not None:
        _save(tokenizer, saved)
    return tokenizer


def _save(tokenizer: Any, folder: Path) -> None:
    """Save ``tokenizer`` to ``folder`` atomically (a cache: failing only costs time later)."""
    tmp = folder.with_name(f"{folder.name}.tmp-{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tokenizer.save_pretrained(tmp)
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    except OSError as exc:
        log.warning("local: could not cache the tokenizer in %s: %s", folder, exc)
        shutil.rmtree(tmp, ignore_errors=True)
