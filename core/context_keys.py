"""Outputs with their contexts named by key, and back: the pure half of contexts stored by reference.

The results store (schema version 4, :mod:`ragassay.store.contexts`) keeps each distinct context text once and
an output's JSON names its contexts by key (``context_keys``, in place of ``contexts``). These functions turn
an output into that JSON and back, given the texts; they touch no database, so the read model
(:mod:`ragassay.results`) resolves keys with texts the store read in bulk.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from collections.abc import Mapping

from .errors import StoreError
from .models import RAGOutput

KEYS_FIELD = "context_keys"
#: The most memory the text -> key cache holds (the texts and their keys, as ``sys.getsizeof`` counts them): a
#: corpus chunk retrieved again is hashed once, and a run of millions of distinct contexts holds no more than this.
CACHE_BYTES = 1 << 20
_ENTRY_BYTES = 128  # a key (81 bytes) and its dict slot, counted with each text
_keys: dict[str, str] = {}  # text -> key, for the texts seen last
_cached_bytes = 0


def text_key(text: str) -> str:
    """The key of a context text: URL-safe base64 of the first 24 bytes of its sha256 (32 characters)."""
    global _cached_bytes
    key = _keys.get(text)
    if key is None:
        key = base64.urlsafe_b64encode(hashlib.sha256(text.encode("utf-8")).digest()[:24]).decode()
        size = sys.getsizeof(text) + _ENTRY_BYTES
        if size <= CACHE_BYTES // 16:  # a very long text is hashed each time rather than crowd the others out
            if _cached_bytes + size > CACHE_BYTES:
                _keys.clear()
                _cached_bytes = 0
            _keys[text] = key
            _cached_bytes += size
    return key


def pack(output: RAGOutput, texts: dict[str, str]) -> str:
    """The stored JSON of ``output``: its contexts replaced by their keys (``context_keys``, last), each text
    added to ``texts`` (key -> text) for the caller to store."""
    if not output.contexts:
        return output.model_dump_json()
    keys = []
    for context in output.contexts:
        key = text_key(context)
        texts[key] = context
        keys.append(key)
    raw = output.model_dump_json(exclude={"contexts"})
    return f'{raw[:-1]},"{KEYS_FIELD}":{json.dumps(keys)}}}'


def repack(raw: str, texts: dict[str, str]) -> str | None:
    """A stored output JSON with its contexts inline (schema version 3 and before) packed as :func:`pack` does
    (texts added to ``texts``); None when it has no inline contexts (already packed, or none)."""
    data = json.loads(raw)
    contexts = data.get("contexts")
    if not contexts:
        return None
    keys = []
    for context in contexts:
        key = text_key(context)
        texts[key] = context
        keys.append(key)
    del data["contexts"]
    data[KEYS_FIELD] = keys
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def keys_of(raw: str | None) -> list[str]:
    """The context keys a stored output JSON refers to (none for inline or no contexts)."""
    if not raw or f'"{KEYS_FIELD}"' not in raw:
        return []
    keys = json.loads(raw).get(KEYS_FIELD)
    return list(keys) if isinstance(keys, list) else []


def unpack(raw: str, texts: Mapping[str, str]) -> RAGOutput:
    """The :class:`RAGOutput` of a stored JSON, its context keys resolved from ``texts`` (inline contexts, as
    older stores and other backends keep them, are read as they are)."""
    if f'"{KEYS_FIELD}"' not in raw:
        return RAGOutput.model_validate_json(raw)
    data = json.loads(raw)
    keys = data.pop(KEYS_FIELD, None) or []
    try:
        data["contexts"] = [texts[key] for key in keys]
    except KeyError as exc:
        raise StoreError(
            f"a stored output refers to context text {exc.args[0]} that the results store does not hold: the "
            "store is damaged (a table copied without context_texts?)"
        ) from None
    return RAGOutput.model_validate(data)
