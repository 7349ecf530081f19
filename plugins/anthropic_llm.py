"""The ``anthropic`` generator: Anthropic's messages API.

System messages become the ``system`` parameter; tool calls and results become ``tool_use`` and
``tool_result`` blocks; ``tool_choice`` maps to auto / any / none / a forced tool. Structured output is a
forced tool whose input schema is the response model's JSON schema; its input is the structured reply.
Usage: input = input_tokens + cache reads + cache writes; cached = cache reads. The SDK's own retries are off.

Extended thinking (``thinking_budget_tokens``) sends ``thinking = {type: enabled, budget_tokens: N}``; the budget
comes on top of the answer's ``max_tokens`` (the request's max_tokens is their sum), temperature and top_p are not
sent (thinking accepts only the defaults), and structured output asks with ``tool_choice`` auto (a forced tool is
refused with thinking): a reply that does not use the tool is read from its text and re-asked when invalid.
Anthropic's usage counts thinking inside ``output_tokens`` with no separate figure, so ``reasoning_tokens`` stays
0 here: the thinking is priced as output.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field

from ragassay import TokenUsage, hookimpl, require
from ragassay.llm import (
    ChatMessage,
    LLMBackend,
    LLMGenerator,
    LLMRequest,
    LLMResponse,
    RemoteBackend,
    RemoteOptions,
    RetryableError,
    ToolCall,
    read_key,
    sdk_errors,
)


class AnthropicOptions(RemoteOptions):
    """Options of the anthropic generator."""

    model: str = Field("claude-haiku-4-5", description="Model name, e.g. claude-sonnet-4-5.")
    max_tokens: int | None = Field(1024, ge=1, description="Most tokens to generate (the messages API needs one).")
    thinking_budget_tokens: int | None = Field(
        None,
        ge=1024,
        description="Extended thinking: tokens the model may think before answering, sent as thinking = {type: "
        "enabled, budget_tokens: N} (None: no thinking; Anthropic's minimum is 1024). Added to max_tokens; "
        "temperature and top_p are then not sent. Part of the cache key and of a judge's identity.",
    )


class AnthropicBackend(RemoteBackend):
    """One Anthropic messages endpoint."""

    name = "anthropic"

    def identity(self) -> dict[str, Any]:
        budget = self.options.thinking_budget_tokens
        # the budget only when set, so the keys of responses cached before the option existed stay valid
        thinking = {"thinking_budget_tokens": budget} if budget else {}
        return {"backend": self.name, "model": self.model, "tag": self.options.cache_tag, **thinking}

    def endpoint(self) -> str:
        return self.options.base_url or "https://api.anthropic.com"

    def make_client(self) -> Any:
        anthropic = require("anthropic", "anthropic", "the anthropic generator")
        o = self.options
        required = o.base_url is None or o.api_key_env is not None  # a custom server may need no key
        key = read_key(o.api_key_env or "ANTHROPIC_API_KEY", self.name, required=required) or "not-needed"
        http = anthropic.DefaultAsyncHttpxClient(timeout=o.timeout_s)  # not the SDK's self-closing default
        return anthropic.AsyncAnthropic(
            api_key=key, base_url=o.base_url, timeout=o.timeout_s, max_retries=0, http_client=http
        )

    async def complete(self, request: LLMRequest) -> LLMResponse:
        anthropic = require("anthropic", "anthropic", "the anthropic generator")
        payload = self.payload(request)
        with sdk_errors(anthropic, self.options.timeout_s):
            client = self.client()
            if self.options.stream:
                return await self._streamed(anthropic, client, payload, request)
            # The SDK's raw route: its auth, errors and transport, without its typed request transform and
            # response model, and independent of which request fields its typed signature lists.
            message = await client.post("/v1/messages", body=payload, cast_to=object)
            return self.response(_as_dict(message), request)

    def payload(self, request: LLMRequest) -> dict[str, Any]:
        """The messages API request body for ``request``."""
        p, budget = request.params, self.options.thinking_budget_tokens
        system = "\n\n".join(m.content for m in request.messages if m.role == "system")
        payload: dict[str, Any] = {
            "model": self.model,
            "max_tokens": (p.max_tokens or 1024) + (budget or 0),
            "messages": to_wire([m for m in request.messages if m.role != "system"]),
        }
        if budget:
            optional = {"thinking": {"type": "enabled", "budget_tokens": budget}}
        else:
            optional = {"temperature": min(p.temperature, 1.0), "top_p": p.top_p}
        optional.update(system=system or None, stop_sequences=p.stop or None)
        payload.update({k: v for k, v in optional.items() if v is not None})
        tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
        if request.tool_choice is not None:
            payload["tool_choice"] = _choice(request.tool_choice)
        if request.response_schema is not None:
            name = _name(request.response_name)
            tools.append(
                {
                    "name": name,
                    "description": "Give the answer in this structure.",
                    "input_schema": request.response_schema,
                }
            )
            # extended thinking refuses a forced tool: the model is asked to use it (its text is read otherwise)
            payload["tool_choice"] = {"type": "auto"} if budget else {"type": "tool", "name": name}
        if tools:
            payload["tools"] = tools
        if self.options.stream:
            payload["stream"] = True
        return payload

    def response(self, data: dict[str, Any], request: LLMRequest) -> LLMResponse:
        """An LLMResponse from a message body (a dict)."""
        if not isinstance(data.get("content"), list):
            raise RetryableError("malformed response: no content")
        text = "".join(b.get("text") or "" for b in data["content"] if b.get("type") == "text")
        calls = [
            ToolCall(
                id=b["id"],
                name=b["name"],
                arguments=b.get("input") or {},
                raw_arguments=json.dumps(b.get("input") or {}),
            )
            for b in data["content"]
            if b.get("type") == "tool_use"
        ]
        if request.response_schema is not None:
            own = _name(request.response_name)
            text = next((c.raw_arguments for c in calls if c.name == own), text)
            calls = [c for c in calls if c.name != own]
        usage = data.get("usage") or {}
        cached = usage.get("cache_read_input_tokens") or 0
        written = usage.get("cache_creation_input_tokens") or 0
        return LLMResponse(
            text=text,
            tool_calls=calls,
            model=data.get("model") or self.model,
            finish_reason=data.get("stop_reason"),
            usage=TokenUsage(
                input_tokens=(usage.get("input_tokens") or 0) + cached + written,
                output_tokens=usage.get("output_tokens") or 0,
                cached_tokens=cached,
            ),
        )

    async def _streamed(self, anthropic: Any, client: Any, payload: dict[str, Any], request: LLMRequest) -> LLMResponse:
        stream = await client.post(
            "/v1/messages", body=payload, cast_to=object, stream=True, stream_cls=anthropic.AsyncStream[object]
        )
        state = _StreamState()
        async for event in stream:
            state.add(_as_dict(event))
        if not state.stopped:
            raise RetryableError("truncated stream: it ended before message_stop")
        return self.response(state.message, request)


class _StreamState:
    """Accumulates message stream events into one message body."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {"content": [], "usage": {}}
        self.partial: dict[int, str] = {}
        self.stopped = False

    def add(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            self.message = {**event["message"], "content": []}
        elif kind == "content_block_start":
            self.message["content"].append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            block, delta = self.message["content"][event["index"]], event["delta"]
            if delta.get("type") == "text_delta":
                block["text"] = (block.get("text") or "") + delta["text"]
            elif delta.get("type") == "input_json_delta":
                self.partial[event["index"]] = self.partial.get(event["index"], "") + delta["partial_json"]
        elif kind == "content_block_stop" and event["index"] in self.partial:
            raw = self.partial.pop(event["index"])
            self.message["content"][event["index"]]["input"] = json.loads(raw) if raw.strip() else {}
        elif kind == "message_delta":
            self.message["stop_reason"] = (event.get("delta") or {}).get("stop_reason")
            self.message["usage"] = {
                **(self.message.get("usage") or {}),
                **{k: v for k, v in (event.get("usage") or {}).items() if v is not None},
            }
        elif kind == "message_stop":
            self.stopped = True


def to_wire(messages: list[ChatMessage]) -> list[dict[str, Any]]:
    """Non-system ChatMessages as Anthropic messages (tool results in user turns, same roles merged)."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        if message.role == "tool":
            blocks.append(
                {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}
            )
        elif message.content:
            blocks.append({"type": "text", "text": message.content})
        blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in message.tool_calls]
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"] += blocks
        else:
            wire.append({"role": role, "content": blocks})
    return wire


def _as_dict(data: Any) -> dict[str, Any]:
    """A JSON object from the SDK (a dict, or a model where an SDK version builds one)."""
    if isinstance(data, dict):
        return data
    if hasattr(data, "model_dump"):
        return data.model_dump()
    raise RetryableError(f"malformed response: expected a JSON object, got {type(data).__name__}")


def _choice(choice: str) -> dict[str, Any]:
    return {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}.get(
        choice, {"type": "tool", "name": choice}
    )


def _name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)[:64] or "response"


class AnthropicGenerator(LLMGenerator):
    """Answers with an Anthropic Claude model through the messages API."""

    name = "anthropic"
    Options = AnthropicOptions

    def make_backend(self) -> LLMBackend:
        return AnthropicBackend(self.options)

    def assumed_reasoning_tokens(self) -> int:
        """The thinking budget (the most the model may think: an upper bound), 0 without thinking."""
        return self.options.thinking_budget_tokens or 0


@hookimpl
def register_generators(register):
    """Register the anthropic generator."""
    register(AnthropicGenerator)
