"""``http`` adapter: POST each question to the user's endpoint and map the JSON response.

The request body is a JSON template whose strings may contain ``{question}``, ``{question_id}``,
``{conversation_id}``, ``{turn}``, ``{history}`` and ``{sample.<field>}``; header values may contain
``${ENV_VAR}`` (expanded at call time, never stored). A string that is exactly one placeholder becomes the value
itself (``"{history}"``: the list of ``{"speaker", "text"}`` turns, ``"{turn}"``: a number, null for a single
question); inside a longer string it is written as text (the history as JSON).

A conversation turn is posted with its conversation: unless the template places ``{history}`` itself (or
``conversation = false``), a JSON-object body gets ``conversation_id``, ``turn`` and ``history`` added at its top
level. Single questions are posted exactly as the template says.
Response fields are found by JSON pointer (``/data/answer``) or dotted path (``data.answer``, ``items.0``).

Every request is bounded: ``timeout_s`` is a deadline for the whole request (connecting, sending, and reading the
body to its last byte, however slowly it trickles in), and the body is read in chunks and abandoned as soon as
it passes ``max_bytes`` (a ``Content-Length`` above it is refused before reading), so a hostile or broken
endpoint costs at most ``max_bytes`` of memory and ``(retries + 1) x timeout_s`` plus backoff of time.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import RAGOutput, RAGSystem, Sample

from .outputs import MIB, to_output

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_FIELD = re.compile(r"\{(question|question_id|conversation_id|turn|history|sample\.[A-Za-z_][A-Za-z0-9_]*)\}")
#: The fields a conversation turn's body carries when its template places none of them.
CONVERSATION_FIELDS = ("conversation_id", "turn", "history")
RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class ResponseTooLarge(Exception):
    """The endpoint's response body is larger than ``max_bytes``: the unit fails, nothing of it is kept."""


class RequestDeadline(Exception):
    """The whole request (body included) took longer than ``timeout_s``."""


class ResponseMapping(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field("answer", description="Path of the answer in the response JSON.")
    contexts: str | None = Field(None, description="Path of the list of context texts (optional).")
    context_ids: str | None = Field(None, description="Path of the list of context ids (optional).")
    context_text_field: str | None = Field(
        None, description="If contexts is a list of objects: the field holding the text (ids via context_id_field)."
    )
    context_id_field: str | None = Field(None, description="If contexts is a list of objects: the id field.")
    query: str | None = Field(
        None, description="Path of the retrieval query the system sent (e.g. its rewrite of a turn; optional)."
    )
    trajectory: str | None = Field(
        None,
        description="Path of the agent's steps: a list of step objects (id, kind, name, query, context_ids, "
        "arguments, result, error, usage, ...; docs/own-rag.md), stored as the output's trajectory (optional).",
    )


class HttpOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="Endpoint URL.")
    method: str = Field("POST", description="HTTP method.")
    headers: dict[str, str] = Field(default_factory=dict, description="Headers; values may use ${ENV_VAR}.")
    request: Any = Field(
        default_factory=lambda: {"question": "{question}"},
        description="JSON body template; strings may use {question}, {question_id}, {conversation_id}, {turn}, "
        "{history}, {sample.X} (a string that is exactly one placeholder becomes its value: {history} a list).",
    )
    conversation: bool = Field(
        True,
        description="Post a conversation turn with its conversation: add conversation_id, turn and history to a "
        "JSON-object body whose template does not place {history} itself. false: send the template as it is.",
    )
    response: ResponseMapping = Field(default_factory=ResponseMapping, description="Where the fields are.")
    timeout_s: float = Field(
        30.0,
        gt=0,
        description="Deadline of one request, whole: connecting, sending and reading the full body "
        "(a body trickled slowly is cut off at this time). Each retry gets a new deadline.",
    )
    max_bytes: int = Field(
        10 * MIB,
        ge=1,
        description="Largest response body accepted, in bytes (default 10 MiB); checked while reading, so a "
        "larger one is abandoned after max_bytes and the unit fails with the reason.",
    )
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

        body = request_body(self.options.request, sample, self.options.conversation)
        headers = {k: expand_env(v) for k, v in self.options.headers.items()}
        for attempt in range(self.options.retries + 1):
            last = attempt == self.options.retries
            try:
                status, content = await _within(self._attempt(body, headers), self.options.timeout_s)
            except (httpx.TimeoutException, httpx.TransportError, RequestDeadline) as exc:
                if last:
                    raise ConnectionError(f"{_reason(exc)} after {attempt + 1} attempts") from None
            else:
                if status < 400:
                    try:
                        return json.loads(content)
                    except ValueError:
                        raise ValueError(f"endpoint returned non-JSON body: {_text(content, 120)!r}") from None
                if status not in RETRY_STATUS or last:
                    raise RuntimeError(f"endpoint answered HTTP {status}: {_text(content, 200)}")
            await asyncio.sleep(self.options.backoff_s * (2**attempt) * (0.5 + random.random()))
        raise AssertionError("unreachable")

    async def _attempt(self, body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
        """One request: its status and body, read in chunks up to ``max_bytes`` (ResponseTooLarge past it)."""
        limit = self.options.max_bytes
        async with self._client.stream(self.options.method, self.options.url, json=body, headers=headers) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                raise ResponseTooLarge(_too_large(f"declares {int(declared):,} bytes", limit))
            chunks, size = [], 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > limit:
                    raise ResponseTooLarge(_too_large(f"sent more than {limit:,} bytes", limit))
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)

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
        if mapping.query:
            result["query"] = lookup(data, mapping.query)
        if mapping.trajectory:
            result["trajectory"] = lookup(data, mapping.trajectory)
        return result


async def _within(coroutine, seconds: float):
    """``await coroutine``, or RequestDeadline once ``seconds`` have passed (whatever it was waiting for)."""
    try:
        return await asyncio.wait_for(coroutine, seconds)
    except asyncio.TimeoutError:
        raise RequestDeadline(f"no complete response within timeout_s = {seconds:g} s") from None


def _reason(exc: BaseException) -> str:
    """Why an attempt failed in transit: the deadline's message, else the httpx error's name."""
    return str(exc) if isinstance(exc, RequestDeadline) else type(exc).__name__


def _too_large(what: str, limit: int) -> str:
    return (
        f"the endpoint's response {what}, over max_bytes = {limit:,} ({limit / MIB:g} MiB); "
        "nothing of it was kept. Raise the http adapter's max_bytes if answers are really this large"
    )


def _text(content: bytes, limit: int) -> str:
    """The start of a body as text (for error messages)."""
    return content[: limit * 4].decode("utf-8", errors="replace")[:limit]


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


def request_body(template: Any, sample: Sample, conversation: bool = True) -> Any:
    """The body posted for ``sample``: the filled template, and for a conversation turn (with ``conversation``)
    its ``conversation_id``, ``turn`` and ``history`` at the top level unless the template places {history}."""
    body = fill_template(template, sample)
    if not conversation or sample.conversation_id is None or _places_history(template):
        return body
    if not isinstance(body, dict):
        raise ValueError(
            "http adapter: this sample is a conversation turn, but the request template is not a JSON object, so "
            'its history cannot be added: place "{history}" in the template, or set conversation = false to '
            "post turns without it"
        )
    return {**body, **{name: _field(sample, name) for name in CONVERSATION_FIELDS}}


def _places_history(template: Any) -> bool:
    if isinstance(template, dict):
        return any(_places_history(v) for v in template.values())
    if isinstance(template, list):
        return any(_places_history(v) for v in template)
    return isinstance(template, str) and "{history}" in template


def fill_template(template: Any, sample: Sample) -> Any:
    """Substitute {question}, {question_id}, {conversation_id}, {turn}, {history}, {sample.X} in every string of a
    JSON template; a string that is exactly one placeholder becomes the value itself (a list, a number, null)."""
    if isinstance(template, dict):
        return {k: fill_template(v, sample) for k, v in template.items()}
    if isinstance(template, list):
        return [fill_template(v, sample) for v in template]
    if isinstance(template, str):
        whole = _FIELD.fullmatch(template)
        if whole is not None and whole.group(1) in CONVERSATION_FIELDS:
            return _field(sample, whole.group(1))
        return _FIELD.sub(lambda m: _as_text(m.group(1), _field(sample, m.group(1))), template)
    return template


def _as_text(name: str, value: Any) -> str:
    """A placeholder's value inside a longer string: the history as JSON, a single question's missing
    conversation_id or turn as '', anything else as str()."""
    if name in CONVERSATION_FIELDS:
        return json.dumps(value, ensure_ascii=False) if isinstance(value, list) else "" if value is None else str(value)
    return str(value)


def _field(sample: Sample, name: str) -> Any:
    if name == "history":
        return [turn.model_dump() for turn in sample.history]
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
