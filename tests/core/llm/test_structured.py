"""Structured output: finding the JSON in a reply, validating it, and the corrective feedback message."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ragassay.llm.structured import (
    StructuredOutputError,
    check_tool_calls,
    extract_json,
    feedback,
    parse_model,
    schema_instructions,
)
from ragassay.llm.types import ChatMessage, LLMRequest, LLMResponse, ToolCall, ToolSpec


class Verdict(BaseModel):
    correct: bool
    reason: str


@pytest.mark.parametrize(
    "text",
    [
        '{"correct": true, "reason": "ok"}',
        'Sure! ```json\n{"correct": true, "reason": "ok"}\n``` hope that helps',
        'Here: {"correct": true, "reason": "has } and \\" inside"} and more text',
    ],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text)["correct"] is True


def test_no_json_is_an_error():
    with pytest.raises(StructuredOutputError, match="no valid JSON"):
        extract_json("I think it is correct.")


def test_parse_model_names_the_bad_fields():
    assert parse_model('{"correct": false, "reason": "r"}', Verdict) == Verdict(correct=False, reason="r")
    with pytest.raises(StructuredOutputError, match=r"reason: Field required"):
        parse_model('{"correct": false}', Verdict)


def _request(choice, tools=(ToolSpec.from_model(Verdict),)):  # noqa: B008 - built once, never mutated
    return LLMRequest(messages=[ChatMessage(role="user", content="x")], tools=list(tools), tool_choice=choice)


def test_forced_and_required_tool_calls_are_checked():
    good = LLMResponse(tool_calls=[ToolCall(id="1", name="Verdict", arguments={"correct": True, "reason": "r"})])
    check_tool_calls(_request("Verdict"), good)
    check_tool_calls(_request("required"), good)
    check_tool_calls(_request("auto"), LLMResponse(text="plain"))
    with pytest.raises(StructuredOutputError, match="must call the tool 'Verdict'"):
        check_tool_calls(_request("Verdict"), LLMResponse(text="no call"))
    bad = LLMResponse(tool_calls=[ToolCall(id="1", name="Verdict", arguments={"correct": True})])
    with pytest.raises(StructuredOutputError, match="invalid arguments"):
        check_tool_calls(_request("Verdict"), bad)


def test_json_schema_tools_check_required_arguments():
    tool = ToolSpec(
        name="search", parameters={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    )
    with pytest.raises(StructuredOutputError, match="lacks required arguments: q"):
        check_tool_calls(_request("search", [tool]), LLMResponse(tool_calls=[ToolCall(id="1", name="search")]))


def test_feedback_appends_the_reply_and_the_error():
    request = LLMRequest(messages=[ChatMessage(role="user", content="judge")], response_schema={"type": "object"})
    retry = feedback(request, LLMResponse(text="nope"), StructuredOutputError("bad"))
    assert [m.role for m in retry.messages] == ["user", "assistant", "user"]
    assert retry.messages[1].content == "nope" and "bad" in retry.messages[2].content
    assert "JSON schema" in schema_instructions(request)
