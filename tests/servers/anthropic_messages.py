"""A scriptable Anthropic messages-API server on 127.0.0.1 (``POST /v1/messages``), streaming included.

Scripted exactly like :class:`~tests.servers.openai_chat.OpenAIChatServer` (same :class:`Turn` and fault
helpers; pass ``body_type="anthropic"`` to ``rate_limited`` / ``server_error`` for Anthropic error bodies)::

    with AnthropicMessagesServer() as server:
        server.script(Turn(tool_calls=[("retrieve", {"query": "x"})], usage=(100, 20, 60)))
        client = AsyncAnthropic(base_url=server.url, api_key="test")
"""

from __future__ import annotations

import json
from typing import Any

from .base import Reply, Request
from .openai_chat import ScriptedServer, Turn, malformed, rate_limited, server_error, stalled, truncated_stream

__all__ = [
    "AnthropicMessagesServer",
    "Turn",
    "malformed",
    "rate_limited",
    "server_error",
    "stalled",
    "truncated_stream",
]


class AnthropicMessagesServer(ScriptedServer):
    """``POST /v1/messages``. Usage ``(input, output, cached)``: cached is reported as cache reads."""

    routes = ("/v1/messages",)

    def body(self, turn: Turn, request: Request) -> dict[str, Any]:
        prompt, completion, cached = self.usage(turn, request)
        content: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        for i, (name, args) in enumerate(turn.tool_calls):
            content.append(
                {
                    "type": "tool_use",
                    "id": f"toolu_{i}",
                    "name": name,
                    "input": json.loads(args) if isinstance(args, str) else args,
                }
            )
        stop = turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn")
        return {
            "id": "msg_test",
            "type": "message",
            "role": "assistant",
            "model": turn.model or (request.json or {}).get("model") or self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": prompt - cached,
                "output_tokens": completion,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 0,
            },
        }

    def stream_reply(self, turn: Turn, request: Request) -> Reply:
        body = self.body(turn, request)

        def event(kind: str, **data: Any) -> bytes:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

        start = {**body, "content": [], "stop_reason": None, "usage": {**body["usage"], "output_tokens": 1}}
        chunks = [event("message_start", message=start)]
        for index, block in enumerate(body["content"]):
            if block["type"] == "text":
                chunks.append(event("content_block_start", index=index, content_block={"type": "text", "text": ""}))
                chunks += [
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "text_delta", "text": block["text"][i : i + 5]},
                    )
                    for i in range(0, len(block["text"]), 5)
                ]
            else:
                chunks.append(event("content_block_start", index=index, content_block={**block, "input": {}}))
                chunks.append(
                    event(
                        "content_block_delta",
                        index=index,
                        delta={"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                    )
                )
            chunks.append(event("content_block_stop", index=index))
        if turn.truncate:
            return Reply(200, chunks=chunks[:2] + [b'event: content_block_delta\ndata: {"type": "content_bl'])
        chunks.append(
            event(
                "message_delta",
                delta={"stop_reason": body["stop_reason"], "stop_sequence": None},
                usage={"output_tokens": body["usage"]["output_tokens"]},
            )
        )
        chunks.append(event("message_stop"))
        return Reply(200, chunks=chunks)

    def usage(self, turn: Turn, request: Request) -> tuple[int, int, int]:
        if turn.usage is not None:
            return turn.usage
        prompt = json.dumps([(request.json or {}).get("system"), (request.json or {}).get("messages", [])])
        return len(prompt) // 4 + 1, len(turn.text or "") // 4 + 1, 0
