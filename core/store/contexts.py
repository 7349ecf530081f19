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

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import select

from ..context_keys import KEYS_FIELD, keys_of, pack, repack, text_key, unpack
from . import schema as t

__all__ = ["KEYS_FIELD", "fetch_texts", "keys_of", "pack", "repack", "store_texts", "text_key", "unpack"]

TEXTS_PER_STATEMENT = 5_000  # keys per IN list: under SQLite's 32,766 and PostgreSQL's 65,535 parameters


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
