"""A scriptable OpenAI chat-completions server on 127.0.0.1 (and the shared scripting for the Anthropic one).

Replies come from a queue, then from a default responder. A queue item is a :class:`Turn` (a normal
assistant reply: text, tool calls, usage, finish reason, delay), a raw :class:`Reply` (faults), or a callable
``request -> Turn | Reply``. Streaming requests (``"stream": true``) get server-sent events built from the Turn::

    with OpenAIChatServer() as server:
        server.script(Turn(tool_calls=[("retrieve", {"query": "x"})]), rate_limited(0.2), Turn(text="hi"))
        client = AsyncOpenAI(base_url=server.url + "/v1", api_key="test")
"""

from __future__ import annotations

import collections
import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

from .base import JSONServer, Reply, Request


@dataclasses.dataclass
class Turn:
    """One scripted assistant reply. ``tool_calls``: (name, arguments dict or raw JSON string) pairs."""

    text: str | None = "ok"
    tool_calls: list[tuple[str, Any]] = dataclasses.field(default_factory=list)
    usage: tuple[int, int, int] | None = None  # (input, output, cached); default: from the text lengths
    finish_reason: str | None = None
    model: str | None = None
    delay_s: float = 0.0
    truncate: bool = False  # streaming only: stop before the finish event
    reasoning_tokens: int = 0  # OpenAI: reported as usage.completion_tokens_details.reasoning_tokens (of output)


Item = Any  # Turn | Reply | Callable[[Request], Turn | Reply]


def rate_limited(retry_after: float | str = 1, body_type: str = "openai") -> Reply:
    """HTTP 429 with a Retry-After header (seconds)."""
    return Reply(
        429, _error(body_type, "rate_limit_error", "Rate limit reached"), headers={"Retry-After": str(retry_after)}
    )


def server_error(status: int = 500, body_type: str = "openai") -> Reply:
    """An HTTP 5xx with an error body."""
    return Reply(status, _error(body_type, "api_error", f"internal error {status}"))


def stalled(seconds: float, turn: Turn | None = None) -> Turn:
    """A normal reply that arrives only after ``seconds`` (past the client's timeout)."""
    return dataclasses.replace(turn or Turn(text="late"), delay_s=seconds)


def malformed() -> Reply:
    """HTTP 200 whose JSON body is cut off."""
    return Reply(200, raw=b'{"id": "broken", "choices": [{"index": 0, "message": {"role": "assis')


def truncated_stream(text: str = "partial answer") -> Turn:
    """A streamed reply that stops before the model finished (for ``stream: true`` requests)."""
    return Turn(text=text, truncate=True)


def _error(body_type: str, kind: str, message: str) -> dict[str, Any]:
    if body_type == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    return {"error": {"message": message, "type": kind, "code": None}}


class ScriptedServer:
    """A JSONServer whose replies come from a queue, then from ``default``; counts the calls it served."""

    routes: tuple[str, ...] = ()

    def __init__(self, default: Callable[[Request], Item] | None = None, model: str = "test-model"):
        self.model = model
        self.default = self._initial_default = default or self._echo
        self.queue: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self.server = JSONServer({("POST", path): self._handle for path in self.routes})

    def reset(self) -> ScriptedServer:
        """Forget queued replies, recorded requests and a replaced default (to share one server across tests)."""
        with self._lock:
            self.queue.clear()
            self.server.requests.clear()
            self.default = self._initial_default
        return self

    def _echo(self, request: Request) -> Turn:
        return Turn(text=f"echo: {self.last_user_text(request)[-60:]}")

    def script(self, *items: Item) -> ScriptedServer:
        """Append replies to the queue (served in order, one per request)."""
        with self._lock:
            self.queue.extend(items)
        return self

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self) -> list[Request]:
        return self.server.requests

    @property
    def calls(self) -> int:
        """Requests received so far."""
        return len(self.server.requests)

    @property
    def peak_in_flight(self) -> int:
        """Most requests handled at once (since the start or :meth:`reset_peak`)."""
        return self.server.peak_in_flight

    @property
    def in_flight(self) -> int:
        return self.server.in_flight

    def reset_peak(self) -> None:
        self.server.reset_peak()

    def __enter__(self) -> ScriptedServer:
        self.server.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.__exit__(*exc)

    def _handle(self, request: Request) -> Reply:
        with self._lock:
            item = self.queue.popleft() if self.queue else self.default
        if callable(item) and not isinstance(item, (Turn, Reply)):
            item = item(request)
        if isinstance(item, Reply):
            return item
        stream = bool((request.json or {}).get("stream"))
        reply = self.stream_reply(item, request) if stream else Reply(200, self.body(item, request))
        reply.delay_s = item.delay_s
        return reply

    def usage(self, turn: Turn, request: Request) -> tuple[int, int, int]:
        if turn.usage is not None:
            return turn.usage
        prompt = json.dumps((request.json or {}).get("messages", []))
        return len(prompt) // 4 + 1, len(turn.text or "") // 4 + 1, 0

    @staticmethod
    def last_user_text(request: Request) -> str:
        for message in reversed((request.json or {}).get("messages", [])):
            if message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):  # Anthropic content blocks
                    return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
                return content if isinstance(content, str) else json.dumps(content)
        return ""

    def body(self, turn: Turn, request: Request) -> dict[str, Any]:
        raise NotImplementedError

    def stream_reply(self, turn: Turn, request: Request) -> Reply:
        raise NotImplementedError


class OpenAIChatServer(ScriptedServer):
    """``POST /v1/chat/completions`` (and Azure's ``/openai/deployments/test-deployment/chat/completions``)."""

    routes = ("/v1/chat/completions", "/openai/deployments/test-deployment/chat/completions")

    def _calls(self, turn: Turn) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for i, (name, args) in enumerate(turn.tool_calls)
        ]

    def body(self, turn: Turn, request: Request) -> dict[str, Any]:
        prompt, completion, cached = self.usage(turn, request)
        calls = self._calls(turn)
        message = {"role": "assistant", "content": turn.text if not calls else (turn.text or None)}
        if calls:
            message["tool_calls"] = calls
        finish = turn.finish_reason or ("tool_calls" if calls else "stop")
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1,
            "model": turn.model or (request.json or {}).get("model") or self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached},
                "completion_tokens_details": {"reasoning_tokens": turn.reasoning_tokens},
            },
        }

    def stream_reply(self, turn: Turn, request: Request) -> Reply:
        body = self.body(turn, request)
        base = {"id": body["id"], "object": "chat.completion.chunk", "created": 1, "model": body["model"]}

        def chunk(delta: dict, finish: str | None = None, **extra: Any) -> bytes:
            data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}
            return f"data: {json.dumps(data)}\n\n".encode()

        text = turn.text or ""
        chunks = [chunk({"role": "assistant", "content": ""})]
        chunks += [chunk({"content": text[i : i + 5]}) for i in range(0, len(text), 5)]
        for i, call in enumerate(self._calls(turn)):
            chunks.append(chunk({"tool_calls": [{"index": i, **call}]}))
        if turn.truncate:
            return Reply(200, chunks=chunks + [b'data: {"id": "chatcmpl-test", "obj'])
        chunks.append(chunk({}, body["choices"][0]["finish_reason"]))
        chunks.append(f"data: {json.dumps({**base, 'choices': [], 'usage': body['usage']})}\n\n".encode())
        return Reply(200, chunks=chunks + [b"data: [DONE]\n\n"])
