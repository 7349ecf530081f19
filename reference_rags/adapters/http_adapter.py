"""``http`` adapter: POST each question to the user's endpoint and map the JSON response.

The request body is a JSON template whose strings may contain ``{question}``, ``{question_id}`` and
``{sample.<field>}``; header values may contain ``${ENV_VAR}`` (expanded at call time, never stored).
Response fields are found by JSON pointer (``/data/answer``) or dotted path (``data.answer``, ``items.0``).
"""

from __future__ import annotations

import asyncio
import os
import random
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import RAGOutput, RAGSystem, Sample

from .outputs import to_output

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FIELD = re.compile(r"\{(question|question_id|sample\.[A-Za-z_][A-Za-z0-9_]*)\}")
RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class ResponseMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field("answer", description="Path of the answer in the response JSON.")
    contexts: str | None = Field(None, description="Path of the list of context texts (optional).")
    context_ids: str | None = Field(None, description="Path of the list of context ids (optional).")
    context_text_field: str | None = Field(
        None, description="If contexts is a list of objects: the field holding the text (ids via context_id_field)."
    )
    context_id_field: str | None = Field(None, description="If contexts is a list of objects: the id field.")


class HttpOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Endpoint URL.")
    method: str = Field("POST", description="HTTP method.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; values may use ${ENV_VAR}.")
    request: Any = Field(
        default_factory=lambda: {"question": "{question}"},
        description="JSON body template; strings may use {question}, {question_id}, {sample.X}.",
    )
    response: ResponseMapping = Field(default_factory=ResponseMapping, description="Where the fields are.")
    timeout_s: float = Field(30.0, gt=0, description="Timeout of one request.")
    retries: int = Field(3, ge=0, le=20, description="Retries on timeouts, connection errors, 408/429/5xx.")
    backoff_s: float = Field(0.5, ge=0, description="First retry delay; doubles each retry, with jitter.")
    concurrency: int = Field(8, ge=1, le=1024, description="Requests in flight at once.")


class HttpRAG(RAGSystem):
    """Your own RAG behind an HTTP endpoint: a request template in, mapped JSON fields out."""

    name = "http"
    Options = HttpOptions

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._semaphore: asyncio.Semaphore | None = None
        self._client = None

    async def answer(self, sample: Sample) -> RAGOutput:
        import httpx

        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.options.concurrency)
            self._client = httpx.AsyncClient(timeout=self.options.timeout_s)
        async with self._semaphore:
            data = await self._call(sample)
        return to_output(self._map(data), f"http adapter ({self.options.url})")

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def _call(self, sample: Sample) -> Any:
        import httpx

        body = fill_template(self.options.request, sample)
        headers = {k: expand_env(v) for k, v in self.options.headers.items()}
        for attempt in range(self.options.retries + 1):
            last = attempt == self.options.retries
            try:
                response = await self._client.request(self.options.method, self.options.url, json=body, headers=headers)
            except (httpx.TimeoutException, httpx.TransportError) as exc:
                if last:
                    raise ConnectionError(f"{type(exc).__name__} after {attempt + 1} attempts") from None
            else:
                if response.status_code < 400:
                    try:
                        return response.json()
                    except ValueError:
                        raise ValueError(f"endpoint returned non-JSON body: {response.text[:120]!r}") from None
                if response.status_code not in RETRY_STATUS or last:
                    raise RuntimeError(f"endpoint answered HTTP {response.status_code}: {response.text[:200]}")
            await asyncio.sleep(self.options.backoff_s * (2**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    def _map(self, data: Any) -> dict[str, Any]:
        mapping = self.options.response
        result: dict[str, Any] = {"answer": lookup(data, mapping.answer)}
        if mapping.contexts:
            contexts = lookup(data, mapping.contexts) or []
            if mapping.context_text_field:
                result["contexts"] = [lookup(item, mapping.context_text_field) for item in contexts]
                if mapping.context_id_field:
                    result["context_ids"] = [lookup(item, mapping.context_id_field) for item in contexts]
            else:
                result["contexts"] = contexts
        if mapping.context_ids:
            result["context_ids"] = lookup(data, mapping.context_ids) or []
        return result


def lookup(data: Any, path: str) -> Any:
    """Follow a JSON pointer ('/a/0/b') or a dotted path ('a.0.b'); KeyError names the missing step."""
    parts = (
        [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]
        if path.startswith("/")
        else path.split(".")
    )
    current = data
    for part in parts:
        if isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(f"response has no '{part}' (path '{path}')")
    return current


def fill_template(template: Any, sample: Sample) -> Any:
    """Substitute {question}, {question_id}, {sample.X} in every string of a JSON template."""
    if isinstance(template, dict):
        return {k: fill_template(v, sample) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, sample) for v in template]
    if isinstance(template, str):
        return _FIELD.sub(lambda m: str(_field(sample, m.group(1))), template)
    return template


def _field(sample: Sample, name: str) -> Any:
    if name.startswith("sample."):
        key = name.removeprefix("sample.")
        return getattr(sample, key, None) if key in type(sample).model_fields else sample.attributes.get(key, "")
    return getattr(sample, name)


def expand_env(value: str) -> str:
    """Replace ${VAR} with the environment variable's value (KeyError-free: missing → clear error)."""

    def repl(match: re.Match) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise RuntimeError(f"environment variable {name} (used in an http adapter header) is not set")
        return os.environ[name]

    return _ENV.sub(repl, value)
