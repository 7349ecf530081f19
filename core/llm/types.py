"""The vocabulary every backend speaks: chat messages, tools, tool calls, decoding parameters, requests and
responses. Backends translate these to and from their wire formats; nothing here knows a provider."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..models import TokenUsage


class ToolCall(BaseModel):
    """A call of a tool requested by the model."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Provider id of the call (tool results refer to it).")
    name: str = Field(description="Name of the tool called.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Parsed arguments ({} if unparseable).")
    raw_arguments: str = Field(default="", description="The arguments exactly as the model produced them.")


class ChatMessage(BaseModel):
    """One chat message. ``tool`` messages carry a tool result and the id of the call they answer."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["system", "user", "assistant", "tool"] = Field(description="Who speaks.")
    content: str = Field(default="", description="The text of the message.")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls made (assistant only).")
    tool_call_id: str | None = Field(default=None, description="The call a tool result answers (tool only).")
    name: str | None = Field(default=None, description="Name of the tool whose result this is (tool only).")

    @classmethod
    def coerce(cls, value: ChatMessage | dict[str, Any]) -> ChatMessage:
        """Accept a ChatMessage or an OpenAI-style dict (``{"role": ..., "content": ...}``)."""
        if isinstance(value, ChatMessage):
            return value
        data = dict(value)
        if data.get("content") is None:
            data["content"] = ""
        if data.get("tool_calls"):
            data["tool_calls"] = [_coerce_call(c) for c in data["tool_calls"]]
        return cls.model_validate(data)


def _coerce_call(call: Any) -> Any:
    """Accept OpenAI's ``{"id", "function": {"name", "arguments"}}`` shape as well as ours."""
    if isinstance(call, dict) and "function" in call:
        import json

        raw = call["function"].get("arguments") or "{}"
        return {
            "id": call.get("id", ""),
            "name": call["function"]["name"],
            "arguments": json.loads(raw) if isinstance(raw, str) else raw,
            "raw_arguments": raw if isinstance(raw, str) else json.dumps(raw),
        }
    return call


class ToolSpec(BaseModel):
    """A tool the model may call: a name, a description and a JSON schema of its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="Tool name (letters, digits, _ and -).")
    description: str = Field(default="", description="What the tool does, for the model.")
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}}, description="JSON schema of the arguments."
    )
    _model: type[BaseModel] | None = PrivateAttr(default=None)

    @classmethod
    def from_model(cls, model: type[BaseModel], name: str | None = None, description: str | None = None) -> ToolSpec:
        """A tool whose arguments are ``model``'s fields (name: the model's name; description: its docstring)."""
        schema = model.model_json_schema()
        schema.pop("title", None)
        doc = description if description is not None else (model.__doc__ or "").strip()
        spec = cls(name=name or model.__name__, description=doc, parameters=schema)
        spec._model = model
        return spec

    @property
    def model(self) -> type[BaseModel] | None:
        """The pydantic model the tool was made from, if any (validates arguments)."""
        return self._model


class DecodingParams(BaseModel):
    """How to decode. ``temperature == 0`` means greedy (deterministic where the backend allows)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature; 0 = greedy.")
    top_p: float | None = Field(default=None, gt=0, le=1, description="Nucleus sampling mass.")
    max_tokens: int | None = Field(default=None, ge=1, description="Most tokens to generate.")
    seed: int | None = Field(default=None, description="Sampling seed (where the backend supports one).")
    stop: list[str] = Field(default_factory=list, description="Stop sequences.")


class LLMRequest(BaseModel):
    """One model call: messages, optional tools and output schema, decoding parameters."""

    model_config = ConfigDict(extra="forbid")

    messages: list[ChatMessage] = Field(description="The conversation so far.")
    tools: list[ToolSpec] = Field(default_factory=list, description="Tools the model may call.")
    tool_choice: str | None = Field(
        default=None, description="'auto', 'none', 'required', or a tool name to force that tool."
    )
    response_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema the reply must follow (structured output)."
    )
    response_name: str = Field(default="response", description="Name of the structured output (schema title).")
    params: DecodingParams = Field(default_factory=DecodingParams, description="Decoding parameters.")
    sample_index: int = Field(default=0, ge=0, description="Which of N samples (part of the cache key if sampled).")
    repeat: int = Field(
        default=0, ge=0, description="Which repeat of `ragassay run --repeat N` (part of the cache key when not 0)."
    )

    @property
    def forced_tool(self) -> str | None:
        """The tool name the model must call, if a specific one is forced."""
        if self.tool_choice in (None, "auto", "none", "required"):
            return None
        return self.tool_choice


class LLMResponse(BaseModel):
    """What a model returned: text and/or tool calls, the validated object for structured output, usage."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    text: str = Field(default="", description="Generated text (the JSON text for structured output).")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls requested by the model.")
    parsed: Any = Field(default=None, exclude=True, description="The validated pydantic object (structured output).")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens of this call (all attempts).")
    model: str = Field(default="", description="Model that answered, as the provider names it.")
    finish_reason: str | None = Field(default=None, description="Why generation stopped (stop, length, tool_calls).")
    cached: bool = Field(default=False, description="Served from the response cache (no model call).")
    cost_usd: float | None = Field(default=None, description="Cost at list price; None if the model has no price.")

    def tool_call(self, name: str) -> ToolCall | None:
        """The first call of tool ``name``, if any."""
        return next((call for call in self.tool_calls if call.name == name), None)
