"""The ``openai`` generator: OpenAI chat completions, any OpenAI-compatible server, or Azure OpenAI.

Tool calling (``tool_choice`` auto / none / required / a forced tool), structured output to a pydantic model
(``response_format`` json_schema by default), temperature, seed, max tokens, streaming, and ``reasoning_effort``
for reasoning models (sent as the request's ``reasoning_effort``; the reply's
``usage.completion_tokens_details.reasoning_tokens`` becomes ``TokenUsage.reasoning_tokens``). ``base_url`` points it
at vLLM, Ollama, LM Studio or any server speaking ``/v1/chat/completions``; ``azure_endpoint`` (with
``api_version`` and ``azure_deployment``) at Azure OpenAI. The SDK's own retries are off: ragassay retries.
"""

from __future__ import annotations

import functools
import importlib
import json
import os
from typing import Any, Literal

from pydantic import Field

from ragassay import ProviderError, TokenUsage, hookimpl, require
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
    schema_instructions,
    sdk_errors,
)

#: Reasoning tokens ``ragassay estimate`` assumes per call at each ``reasoning_effort`` (an assumption: the real
#: count depends on the model and the item; measured usage keeps the true figure).
ASSUMED_REASONING_TOKENS = {"minimal": 128, "low": 1024, "medium": 4096, "high": 16384}


class OpenAIOptions(RemoteOptions):
    """Options of the openai generator."""

    model: str = Field("gpt-4o-mini", description="Model name (for Azure: the model behind the deployment).")
    azure_endpoint: str | None = Field(None, description="Azure OpenAI resource URL; switches to Azure.")
    azure_deployment: str | None = Field(None, description="Azure deployment name (default: model).")
    api_version: str | None = Field(None, description="Azure OpenAI API version, e.g. 2024-10-21.")
    structured_mode: Literal["json_schema", "json_object", "tool"] = Field(
        "json_schema",
        description="How structured output is requested: response_format json_schema, "
        "json_object plus the schema in the prompt, or a forced tool call.",
    )
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="Request field for max_tokens (newer OpenAI models want max_completion_tokens)."
    )
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = Field(
        None,
        description="A reasoning model's effort, sent as reasoning_effort (None: not sent). When set, temperature "
        "and top_p are not sent (reasoning models accept only their defaults) and max_tokens goes as "
        "max_completion_tokens. Part of the cache key and of a judge's identity.",
    )


def _tls(client_class: type) -> dict[str, Any]:
    """``verify=`` one TLS context for every HTTP client of the process (loading the CA store costs about 20 ms
    per client, and a run makes one client per 8 concurrent calls and loop), made by the SDK's HTTP library with
    its defaults; empty (each client makes its own) where that library has no ``create_ssl_context``."""
    context = _tls_context(client_class, os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    return {} if context is None else {"verify": context}


@functools.cache
def _tls_context(client_class: type, cert_file: str | None, cert_dir: str | None) -> Any:
    """The context ``client_class``'s library (httpx or httpx2) makes by default; cached per certificate
    variables, which that default reads."""
    base = next((c for c in client_class.__mro__ if c.__name__ == "AsyncClient"), None)
    make = (
        getattr(importlib.import_module(base.__module__.partition(".")[0]), "create_ssl_context", None)
        if base
        else None
    )
    return make() if make is not None else None


class OpenAIBackend(RemoteBackend):
    """One OpenAI (or compatible, or Azure) endpoint."""

    name = "openai"

    def identity(self) -> dict[str, Any]:
        o = self.options
        return {
            "backend": self.name,
            "model": self.model,
            "deployment": o.azure_deployment,
            "structured_mode": o.structured_mode,
            "tag": o.cache_tag,
            # only when set, so the keys of responses cached before the option existed stay valid
            **({"reasoning_effort": o.reasoning_effort} if o.reasoning_effort else {}),
        }

    def endpoint(self) -> str:
        return self.options.azure_endpoint or self.options.base_url or "https://api.openai.com/v1"

    def make_client(self) -> Any:
        openai = require("openai", "openai", "the openai generator")
        o = self.options
        env = o.api_key_env or ("AZURE_OPENAI_API_KEY" if o.azure_endpoint else "OPENAI_API_KEY")
        # a self-hosted server (base_url) may need no key, unless the config names a variable for one
        required = o.base_url is None or o.api_key_env is not None
        key = read_key(env, self.name, required=required) or "not-needed"
        # our own HTTP client: the SDK's default one closes itself from __del__ on whatever loop then runs
        common = {
            "api_key": key,
            "timeout": o.timeout_s,
            "max_retries": 0,
            "http_client": openai.DefaultAsyncHttpxClient(timeout=o.timeout_s, **_tls(openai.DefaultAsyncHttpxClient)),
        }
        if o.azure_endpoint:
            return openai.AsyncAzureOpenAI(
                azure_endpoint=o.azure_endpoint,
                api_version=o.api_version,
                azure_deployment=o.azure_deployment or o.model,
                **common,
            )
        return openai.AsyncOpenAI(base_url=o.base_url, **common)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        openai = require("openai", "openai", "the openai generator")
        payload = self.payload(request)
        with sdk_errors(openai, self.options.timeout_s):
            client = self.client()
            if self.options.stream:
                return await self._streamed(openai, client, payload, request)
            # The SDK's documented raw route: same auth, errors and transport, without its typed request
            # transform and response model (about 2 ms per call) and independent of its typed signature.
            completion = await client.post("/chat/completions", body=payload, cast_to=object)
            return self.response(_as_dict(completion), request)

    def payload(self, request: LLMRequest) -> dict[str, Any]:
        """The chat.completions request body for ``request``."""
        o, p = self.options, request.params
        messages = [to_wire(m) for m in request.messages]
        payload: dict[str, Any] = {
            "model": o.azure_deployment or self.model if o.azure_endpoint else self.model,
            "messages": messages,
        }
        if o.reasoning_effort:
            optional = {"reasoning_effort": o.reasoning_effort, "seed": p.seed, "max_completion_tokens": p.max_tokens}
        else:
            optional = {
                "temperature": p.temperature,
                "top_p": p.top_p,
                "seed": p.seed,
                o.max_tokens_param: p.max_tokens,
            }
        optional["stop"] = p.stop or None
        payload.update({k: v for k, v in optional.items() if v is not None})
        tools = [_tool(t.name, t.description, t.parameters) for t in request.tools]
        if request.tool_choice is not None:
            payload["tool_choice"] = _choice(request.tool_choice)
        if request.response_schema is not None:
            self._structured(request, payload, messages, tools)
        if tools:
            payload["tools"] = tools
        if o.stream:
            payload.update(stream=True, stream_options={"include_usage": True})
        return payload

    def _structured(self, request: LLMRequest, payload: dict, messages: list, tools: list) -> None:
        mode, name = self.options.structured_mode, _name(request.response_name)
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": request.response_schema, "strict": False},
            }
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object"}
            messages.insert(0, {"role": "system", "content": schema_instructions(request)})
        else:
            tools.append(_tool(name, "Give the answer in this structure.", request.response_schema))
            payload["tool_choice"] = _choice(name)

    def response(self, data: dict[str, Any], request: LLMRequest) -> LLMResponse:
        """An LLMResponse from a chat.completion body (a dict)."""
        choices = data.get("choices") or []
        if not choices or choices[0].get("message") is None:
            raise RetryableError("malformed response: no choices")
        message, usage = choices[0]["message"], data.get("usage") or {}
        calls = [
            _call(c["id"], c["function"]["name"], c["function"].get("arguments") or "")
            for c in message.get("tool_calls") or []
        ]
        text = message.get("content") or ""
        if request.response_schema is not None and self.options.structured_mode == "tool":
            own = _name(request.response_name)
            text = next((c.raw_arguments for c in calls if c.name == own), text)
            calls = [c for c in calls if c.name != own]
        cached = ((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0
        reasoning = ((usage.get("completion_tokens_details") or {}).get("reasoning_tokens")) or 0
        return LLMResponse(
            text=text,
            tool_calls=calls,
            model=data.get("model") or self.model,
            finish_reason=choices[0].get("finish_reason"),
            usage=TokenUsage(
                input_tokens=usage.get("prompt_tokens") or 0,
                output_tokens=usage.get("completion_tokens") or 0,
                cached_tokens=cached,
                reasoning_tokens=reasoning,
            ),
        )

    async def _streamed(self, openai: Any, client: Any, payload: dict[str, Any], request: LLMRequest) -> LLMResponse:
        stream = await client.post(
            "/chat/completions", body=payload, cast_to=object, stream=True, stream_cls=openai.AsyncStream[object]
        )
        state = _StreamState()
        async for chunk in stream:
            state.add(_as_dict(chunk))
        if state.finish_reason is None:
            raise RetryableError("truncated stream: it ended before the model finished")
        return self.response(state.completion(self.model), request)


class _StreamState:
    """Accumulates chat.completion.chunk deltas into one chat.completion body."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model = ""

    def add(self, chunk: dict[str, Any]) -> None:
        self.model = chunk.get("model") or self.model
        self.usage = chunk.get("usage") or self.usage
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            self.text.append(delta.get("content") or "")
            for call in delta.get("tool_calls") or []:
                slot = self.calls.setdefault(call.get("index", 0), {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.get("id") or slot["id"]
                function = call.get("function") or {}
                slot["name"] += function.get("name") or ""
                slot["arguments"] += function.get("arguments") or ""
            self.finish_reason = choice.get("finish_reason") or self.finish_reason

    def completion(self, model: str) -> dict[str, Any]:
        calls = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for _, c in sorted(self.calls.items())
        ]
        message = {"role": "assistant", "content": "".join(self.text), "tool_calls": calls or None}
        return {
            "model": self.model or model,
            "usage": self.usage,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish_reason}],
        }


def to_wire(message: ChatMessage) -> dict[str, Any]:
    """A ChatMessage as an OpenAI chat message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["content"] = message.content or None
        wire["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.raw_arguments or json.dumps(c.arguments)},
            }
            for c in message.tool_calls
        ]
    return wire


def _as_dict(data: Any) -> dict[str, Any]:
    """A JSON object from the SDK (a dict, or a model where an SDK version builds one)."""
    if isinstance(data, dict):
        return data
    if hasattr(data, "model_dump"):
        return data.model_dump()
    raise RetryableError(f"malformed response: expected a JSON object, got {type(data).__name__}")


def _tool(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _choice(choice: str) -> Any:
    return choice if choice in ("auto", "none", "required") else {"type": "function", "function": {"name": choice}}


def _name(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)[:64] or "response"


def _call(call_id: str, name: str, raw: str) -> ToolCall:
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except ValueError:
        arguments = {}
    return ToolCall(
        id=call_id, name=name, arguments=arguments if isinstance(arguments, dict) else {}, raw_arguments=raw
    )


class OpenAIGenerator(LLMGenerator):
    """Answers with an OpenAI chat model, an OpenAI-compatible server (base_url) or Azure OpenAI."""

    name = "openai"
    Options = OpenAIOptions

    def make_backend(self) -> LLMBackend:
        if self.options.azure_endpoint and not self.options.api_version:
            raise ProviderError("openai: azure_endpoint needs api_version (e.g. '2024-10-21')")
        return OpenAIBackend(self.options)

    def assumed_reasoning_tokens(self) -> int:
        """:data:`ASSUMED_REASONING_TOKENS` at the configured effort (0 without one)."""
        effort = self.options.reasoning_effort
        return ASSUMED_REASONING_TOKENS[effort] if effort else 0

    def reasoning_within_max_tokens(self) -> bool:
        """OpenAI's max_completion_tokens bounds reasoning and answer together."""
        return True


@hookimpl
def register_generators(register):
    """Register the openai generator."""
    register(OpenAIGenerator)
