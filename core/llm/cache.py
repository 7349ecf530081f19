"""The persistent response cache: one SQLite file (any SQLAlchemy URL works) shared by every run of a project.

The key is the sha256 of a canonical JSON (sorted keys, no whitespace) of everything that determines a
response: backend, model and backend-specific identity (e.g. the local model's dtype, an optional
``cache_tag``), messages, tools, tool choice, the response schema, the decoding parameters, and, only when
``temperature > 0``, the sample index, so N stochastic samples are N entries while greedy calls share one; and
the repeat index of ``ragassay run --repeat N`` when it is not 0 (:mod:`ragassay.llm.repeats`), so repeats
are real calls even at temperature 0.
Nothing secret is part of a request, so nothing secret is stored: neither keys nor headers nor URLs.
"""

from __future__ import annotations

import atexit
import functools
import threading
import time
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    delete,
    event,
    func,
    select,
)
from sqlalchemy.exc import DatabaseError, IntegrityError, OperationalError

from ..errors import StoreError
from .cache_keys import CACHE_FORMAT
from .types import LLMResponse

metadata = MetaData()
responses = Table(
    "llm_responses",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("backend", String(64), nullable=False),
    Column("model", Text, nullable=False),
    Column("response_json", Text, nullable=False),
    Column("input_tokens", Integer, nullable=False, default=0),
    Column("output_tokens", Integer, nullable=False, default=0),
    Column("created_at", Float, nullable=False),
)
meta = Table("llm_cache_meta", metadata, Column("format", Integer, nullable=False))

_SQLITE_GET = "SELECT response_json FROM llm_responses WHERE key = ?"
_SQLITE_PUT = (
    "INSERT OR REPLACE INTO llm_responses (key, backend, model, response_json, input_tokens, "
    "output_tokens, created_at) VALUES (:key, :backend, :model, :response_json, :input_tokens, "
    ":output_tokens, :created_at)"
)


class ResponseCache:
    """Get and put :class:`LLMResponse` objects by key. Thread-safe; one connection held for speed."""

    def __init__(self, url: str):
        self.url = url  # as written: shown by `ragassay cache stats`, a ${VAR} secret never expanded there
        if "://" in url and "$" in url:  # a server URL with its secret in the environment
            from ..environment import expand

            url = expand(url, "[llm] cache_path")
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._lock = threading.Lock()
        try:
            self._prepare()
            self._conn = self.engine.connect()
        except (DatabaseError, OperationalError) as exc:
            self.engine.dispose()
            raise StoreError(
                f"cannot open the LLM response cache {display_url(url)}: {exc.orig}. "
                f"Delete the file or clear it with: ragassay cache clear"
            ) from exc
        self._get = select(responses.c.response_json).where(responses.c.key == bindparam("key"))
        self._pooled = self.engine.raw_connection() if self.engine.dialect.name == "sqlite" else None
        self._raw = self._pooled.driver_connection if self._pooled is not None else None

    def _prepare(self) -> None:
        """Create the tables; a cache written in another format is dropped (it is only a cache)."""
        with self.engine.begin() as conn:
            metadata.create_all(conn)
            found = conn.execute(select(meta.c.format)).scalar()
            if found != CACHE_FORMAT:
                conn.execute(delete(responses))
                conn.execute(delete(meta))
                conn.execute(meta.insert().values(format=CACHE_FORMAT))

    def get(self, key: str) -> LLMResponse | None:
        """The stored response for ``key`` (marked ``cached``), or None."""
        with self._lock:
            if self._raw is not None:  # hot path: SQLite's own cursor, ~25 us instead of ~60 us
                row = self._raw.execute(_SQLITE_GET, (key,)).fetchone()
                raw = row[0] if row else None
            else:
                raw = self._conn.execute(self._get, {"key": key}).scalar()
                self._conn.rollback()
        if raw is None:
            return None
        response = LLMResponse.model_validate_json(raw)
        response.cached = True
        return response

    def put(self, key: str, backend: str, response: LLMResponse) -> None:
        """Store ``response`` under ``key`` (replacing an older entry)."""
        row = {
            "key": key,
            "backend": backend,
            "model": response.model,
            "response_json": response.model_dump_json(exclude={"cached", "cost_usd"}),
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
            "created_at": time.time(),
        }
        with self._lock:
            if self._raw is not None:
                self._raw.execute(_SQLITE_PUT, row)
                self._raw.commit()
                return
            try:
                self._conn.execute(delete(responses).where(responses.c.key == key))
                self._conn.execute(responses.insert().values(**row))
                self._conn.commit()
            except IntegrityError:  # another process (a Ray worker) stored the same request meanwhile: keep it
                self._conn.rollback()

    def stats(self) -> dict[str, Any]:
        """Entries and stored tokens per backend and model."""
        query = (
            select(
                responses.c.backend,
                responses.c.model,
                func.count(),
                func.sum(responses.c.input_tokens),
                func.sum(responses.c.output_tokens),
            )
            .group_by(responses.c.backend, responses.c.model)
            .order_by(responses.c.backend, responses.c.model)
        )
        with self._lock:
            rows = [
                {"backend": b, "model": m, "entries": n, "input_tokens": i or 0, "output_tokens": o or 0}
                for b, m, n, i, o in self._conn.execute(query)
            ]
            self._conn.commit()
        return {"url": display_url(self.url), "entries": sum(r["entries"] for r in rows), "by_model": rows}

    def clear(self, backend: str | None = None, model: str | None = None) -> int:
        """Delete entries (all, or those of one backend and/or model); returns how many."""
        statement = delete(responses)
        if backend:
            statement = statement.where(responses.c.backend == backend)
        if model:
            statement = statement.where(responses.c.model == model)
        with self._lock:
            count = self._conn.execute(statement).rowcount
            self._conn.commit()
        return count

    def close(self) -> None:
        with self._lock:
            if self._pooled is not None:
                self._pooled.close()
            self._conn.close()
        self.engine.dispose()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


def display_url(url: str) -> str:
    """``url`` with any password masked (database URLs may carry credentials)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy understands: show nothing secret
        return url.split("@")[-1]


_open: dict[str, ResponseCache] = {}
_open_lock = threading.Lock()


def open_cache(url: str) -> ResponseCache:
    """The process-wide cache object for ``url`` (opened once)."""
    with _open_lock:
        cache = _open.get(url)
        if cache is None:
            _close_at_exit()
            cache = _open[url] = ResponseCache(url)
        return cache


@functools.cache
def _close_at_exit() -> None:
    """Close the caches when the process exits (once registered): the SQLite write-ahead log is saved into the
    file, as on any close, also when the CLI ends the process without the interpreter's teardown."""
    atexit.register(close_caches)


def close_caches() -> None:
    """Close every cache opened by :func:`open_cache` (tests, ``ragassay cache clear``)."""
    with _open_lock:
        for cache in _open.values():
            cache.close()
        _open.clear()
