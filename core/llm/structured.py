"""Structured output and forced tool calls: find the JSON in a reply, validate it, explain what was wrong.

API backends are asked for JSON natively (OpenAI ``response_format``, Anthropic a forced tool); the local
model is prompted with the schema. Either way the reply is checked here, and the client retries a bounded
number of times with the validation error fed back to the model before giving up with ProviderError.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from .types import LLMRequest, LLMResponse, ToolSpec

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


class StructuredOutputError(ValueError):
    """The reply is not the JSON (or the tool call) that was asked for."""


def extract_json(text: str) -> Any:
    """The first JSON value in ``text``: the whole text, a fenced block, or the first balanced ``{...}``."""
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCE.finditer(text)]
    start = text.find("{")
    if start >= 0:
        candidates.append(_balanced(text, start))
    for candidate in candidates:
        if candidate:
            try:
                return json.loads(candidate)
            except ValueError:
                continue
    raise StructuredOutputError("the reply contains no valid JSON object")


def _balanced(text: str, start: int) -> str:
    """The substring from ``start`` to the brace that closes it (strings respected), or the rest."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return text[start:]


def parse_model(text: str, model: type[BaseModel]) -> BaseModel:
    """Validate the JSON in ``text`` as ``model``; raises :class:`StructuredOutputError` saying why not."""
    data = extract_json(text)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors())
        raise StructuredOutputError(f"the JSON does not match the schema: {problems}") from None


def check_tool_calls(request: LLMRequest, response: LLMResponse) -> None:
    """For a forced or required tool choice, the reply must call a (the) tool with valid arguments."""
    if request.tool_choice in (None, "auto", "none"):
        return
    wanted = request.forced_tool
    calls = [c for c in response.tool_calls if wanted is None or c.name == wanted]
    if not calls:
        what = f"the tool '{wanted}'" if wanted else "one of the tools"
        raise StructuredOutputError(f"the reply must call {what}, but it did not")
    specs = {t.name: t for t in request.tools}
    for call in calls:
        _check_arguments(specs.get(call.name), call.arguments, call.raw_arguments)


def _check_arguments(spec: ToolSpec | None, arguments: dict[str, Any], raw: str) -> None:
    if spec is None:
        raise StructuredOutputError("the reply calls a tool that was not offered")
    if raw and not arguments and raw.strip() not in ("{}", ""):
        raise StructuredOutputError(f"the arguments of '{spec.name}' are not valid JSON")
    if spec.model is not None:
        try:
            spec.model.model_validate(arguments)
        except ValidationError as exc:
            raise StructuredOutputError(f"invalid arguments for '{spec.name}': {exc.errors()[0]['msg']}") from None
        return
    missing = [k for k in spec.parameters.get("required", []) if k not in arguments]
    if missing:
        raise StructuredOutputError(f"the call of '{spec.name}' lacks required arguments: {', '.join(missing)}")


def feedback(request: LLMRequest, response: LLMResponse, error: StructuredOutputError) -> LLMRequest:
    """``request`` extended with the faulty reply and a message asking for a corrected one."""
    from .types import ChatMessage

    if request.response_schema is not None:
        ask = "Reply again with only a JSON object that matches the schema."
    else:
        ask = "Reply again, calling the tool as required."
    messages = list(request.messages) + [
        ChatMessage(
            role="assistant",
            content=response.text
            or json.dumps([c.model_dump(include={"name", "arguments"}) for c in response.tool_calls]),
        ),
        ChatMessage(role="user", content=f"Your reply was not valid: {error}. {ask}"),
    ]
    return request.model_copy(update={"messages": messages})


def schema_instructions(request: LLMRequest) -> str:
    """Prompt text asking for JSON that follows ``request.response_schema`` (for backends without native support)."""
    schema = json.dumps(request.response_schema, separators=(",", ":"))
    return (
        f"Reply with only a JSON object (no other text) that matches this JSON schema named "
        f"'{request.response_name}': {schema}"
    )
