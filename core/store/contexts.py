"""Context texts stored once per store (schema version 4): outputs keep keys, the texts live in ``context_texts``.

A retrieval run of 1,200 outputs with 100 contexts each used to store 120,000 context texts inline in
``outputs.output_json``: the store grew with outputs x k x text length (203 MB for an 8 MB corpus). Now every
distinct context text is stored once in ``context_texts`` under its key (content addressing), and an output's
JSON holds the keys in ``context_keys`` in place of ``contexts`` (its ``context_ids``, ``context_document_ids``
and ``trace["scores"]`` as before). The store grows with the outputs and the distinct texts, whatever k.

- The key is the first 24 bytes (192 bits) of the sha256 of the UTF-8 text, URL-safe base64: 32 characters
  (the full hex digest would make the keys alone as large as the corpus at k = 100).
- Every context goes through the table: corpus chunks and the texts a system gives (http, python and
  precomputed adapters) alike, so a text is stored once however many outputs and runs share it.
- Texts are inserted with ``INSERT ... ON CONFLICT DO NOTHING`` in the batch's own transaction (concurrent
  writers and retried batches insert the same key harmlessly) and never deleted: an output replaced or
  deleted leaves its texts for the others that share them.
- Readers resolve the keys in bulk, :data:`TEXTS_PER_STATEMENT` keys per statement, never one query per output.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select

from ..errors import StoreError
from ..models import RAGOutput
from . import schema as t

KEYS_FIELD = "context_keys"
TEXTS_PER_STATEMENT = 5_000  # keys per IN list: under SQLite's 32,766 and PostgreSQL's 65,535 parameters
_CACHE_LIMIT = 200_000
_keys: dict[str, str] = {}  # text -> key, for the texts seen last (a corpus chunk is hashed once per process)


def text_key(text: str) -> str:
    """The key of a context text: URL-safe base64 of the first 24 bytes of its sha256 (32 characters)."""
    key = _keys.get(text)
    if key is None:
        if len(_keys) >= _CACHE_LIMIT:
            _keys.clear()
        key = _keys[text] = base64.urlsafe_b64encode(hashlib.sha256(text.encode("utf-8")).digest()[:24]).decode()
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


def fetch_texts(conn: Any, keys: Iterable[str]) -> dict[str, str]:
    """key -> text for ``keys`` (distinct; :data:`TEXTS_PER_STATEMENT` per statement)."""
    wanted = sorted(set(keys))
    found: dict[str, str] = {}
    c = t.context_texts.c
    for start in range(0, len(wanted), TEXTS_PER_STATEMENT):
        chunk = wanted[start : start + TEXTS_PER_STATEMENT]
        found.update((key, text) for key, text in conn.execute(select(c.key, c.text).where(c.key.in_(chunk))))
    return found


def store_texts(conn: Any, texts: Mapping[str, str], table: Any = None) -> None:
    """Insert the texts the table lacks, in key order (concurrent writers lock keys in one order), each insert
    ``ON CONFLICT DO NOTHING`` (a concurrent writer or an earlier attempt may have stored it meanwhile).

    ``table``: the ``context_texts`` table as a migration defines it (default: the current schema's)."""
    if not texts:
        return
    table = t.context_texts if table is None else table
    missing = sorted(set(texts) - set(_existing(conn, table, texts)))
    if not missing:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    statement = insert(table).on_conflict_do_nothing(index_elements=["key"])
    for start in range(0, len(missing), TEXTS_PER_STATEMENT):
        conn.execute(
            statement, [{"key": key, "text": texts[key]} for key in missing[start : start + TEXTS_PER_STATEMENT]]
        )


def _existing(conn: Any, table: Any, keys: Iterable[str]) -> list[str]:
    c = table.c
    wanted = sorted(keys)
    found: list[str] = []
    for start in range(0, len(wanted), TEXTS_PER_STATEMENT):
        chunk = wanted[start : start + TEXTS_PER_STATEMENT]
        found += conn.execute(select(c.key).where(c.key.in_(chunk))).scalars().all()
    return found
