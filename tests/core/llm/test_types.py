"""Messages, tools and requests: coercion from OpenAI-style dicts, tools from pydantic models."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from ragassay.llm.types import ChatMessage, DecodingParams, LLMRequest, LLMResponse, ToolCall, ToolSpec


class Retrieve(BaseModel):
    """Decide whether to retrieve documents."""

    retrieve: bool = Field(description="True to search the corpus.")


def test_coerce_accepts_openai_dicts_with_tool_calls():
    message = ChatMessage.coerce(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "Retrieve", "arguments": '{"retrieve": true}'}}
            ],
        }
    )
    assert message.content == "" and message.tool_calls[0].name == "Retrieve"
    assert message.tool_calls[0].arguments == {"retrieve": True}
    assert message.tool_calls[0].raw_arguments == '{"retrieve": true}'
    assert ChatMessage.coerce(message) is message


def test_unknown_roles_and_keys_are_rejected():
    with pytest.raises(ValidationError):
        ChatMessage.coerce({"role": "robot", "content": "x"})
    with pytest.raises(ValidationError):
        ChatMessage.coerce({"role": "user", "content": "x", "colour": "red"})


def test_tool_spec_from_model_keeps_schema_docstring_and_model():
    spec = ToolSpec.from_model(Retrieve)
    assert spec.name == "Retrieve" and spec.description == "Decide whether to retrieve documents."
    assert spec.parameters["properties"]["retrieve"]["type"] == "boolean"
    assert spec.parameters["required"] == ["retrieve"] and "title" not in spec.parameters
    assert spec.model is Retrieve
    assert ToolSpec.from_model(Retrieve, name="retrieve", description="d").name == "retrieve"


def test_tool_names_are_validated():
    with pytest.raises(ValidationError):
        ToolSpec(name="has spaces")


def test_forced_tool_is_a_tool_name_only():
    def request(choice):
        return LLMRequest(messages=[ChatMessage(role="user", content="x")], tool_choice=choice)

    assert [request(c).forced_tool for c in (None, "auto", "none", "required", "Retrieve")] == [
        None,
        None,
        None,
        None,
        "Retrieve",
    ]


def test_decoding_params_bounds():
    with pytest.raises(ValidationError):
        DecodingParams(temperature=-1)
    with pytest.raises(ValidationError):
        DecodingParams(max_tokens=0)


def test_response_tool_call_lookup_and_parsed_not_serialised():
    response = LLMResponse(
        tool_calls=[ToolCall(id="1", name="a"), ToolCall(id="2", name="b")], parsed=Retrieve(retrieve=True)
    )
    assert response.tool_call("b").id == "2" and response.tool_call("c") is None
    assert "parsed" not in response.model_dump()
