"""The response cache's keys: which requests are the same call (:mod:`ragassay.llm.cache` stores them).

Plain functions without SQLAlchemy: the LLM client computes keys on every call, and a run with the cache off
imports no SQLAlchemy for its calls.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .types import LLMRequest

#: Part of every key: bump it when what a key covers changes (every stored response then misses).
CACHE_FORMAT = 1


def cache_key(identity: dict[str, Any] | str, request: LLMRequest) -> str:
    """sha256 hex digest of the canonical JSON of ``identity`` (backend, model, ...) and ``request``.

    Pydantic models serialise their fields in declaration order, so only free-form dicts (identity, tool
    parameters, the response schema) need sorting to be canonical; fields left at their defaults are omitted,
    so adding a field with a default to a message or to the decoding parameters keeps existing keys valid.
    ``identity`` may be given already canonicalised (see :func:`canonical`).
    """
    parts = [str(CACHE_FORMAT), identity if isinstance(identity, str) else canonical(identity)]
    if request.tools or request.response_schema is not None:
        parts.append(
            canonical(
                {
                    "tools": [t.model_dump() for t in request.tools],
                    "response": [request.response_name, request.response_schema] if request.response_schema else None,
                }
            )
        )
    sampled = request.params.temperature > 0
    parts.append(
        request.model_dump_json(
            include={"messages", "tool_choice", "params", "repeat"} | ({"sample_index"} if sampled else set()),
            exclude_defaults=True,
        )
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def canonical(value: Any) -> str:
    """Compact JSON with sorted keys."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
