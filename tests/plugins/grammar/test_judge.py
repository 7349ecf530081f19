"""The grammar_llm judge: Table 6 "Ours" prompt, robust Correct/Incorrect parsing, unscored otherwise."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import hookimpl
from ragassay.components import ComponentContext, Generation, Generator
from ragassay.models import RAGOutput, Sample
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.grammar.judge import GrammarLLMJudge, parse_verdict
from ragassay.plugins.grammar.prompts import JUDGE_PROMPT


class ReplyOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    reply: str = Field("Correct", description="What the fake LLM says.")


class FixedReply(Generator):
    """Replies with a fixed text and remembers the prompt."""

    name = "fixed"
    Options = ReplyOptions
    seen: list[str] = []

    async def generate(self, request):
        type(self).seen.append(request.messages[-1]["content"])
        return Generation(text=self.options.reply)


class Plugin:
    @hookimpl
    def register_generators(self, register):
        register(FixedReply)


@pytest.fixture
def context():
    FixedReply.seen = []
    return ComponentContext(registry=load_plugins([("fake", Plugin())]).registry)


SAMPLE = Sample(question_id="q", question="Where is {O'Brien} based?", reference_answers=["Zürich"])


def _judge(context, reply: str, sample: Sample = SAMPLE, answer: str = "In Zürich."):
    judge = GrammarLLMJudge(
        GrammarLLMJudge.Options(generator={"name": "fake/fixed", "options": {"reply": reply}}), context=context
    )
    return asyncio.run(judge.judge(sample, RAGOutput(answer=answer)))


@pytest.mark.parametrize(
    "reply, verdict, score",
    [
        ("Correct", "correct", 1.0),
        ("**Incorrect**", "incorrect", 0.0),
        ("##Judgement##: correct.", "correct", 1.0),
        ("Incorrect. The correct answer would be Zürich.", "incorrect", 0.0),
        ("The response is correct; it is not incorrect.", "correct", 1.0),
    ],
)
def test_verdicts_are_parsed_from_the_first_label(context, reply, verdict, score):
    result = _judge(context, reply)
    assert (result.verdict, result.score) == (verdict, score)
    assert result.judge_id.startswith("grammar_llm:fake/fixed:")


def test_the_prompt_is_table6_filled_in(context):
    _judge(context, "Correct")
    assert FixedReply.seen == [
        JUDGE_PROMPT.replace("{query}", "Where is {O'Brien} based?")
        .replace("{true_answer}", "Zürich")
        .replace("{given_response}", "In Zürich.")
    ]
    assert FixedReply.seen[0].endswith("##Given Response##: In Zürich.\n##Judgement##:")


@pytest.mark.parametrize("reply", ["", "Maybe?", "The answer is incorrectly phrased"])
def test_unparseable_replies_are_unscored_with_the_reply(context, reply):
    result = _judge(context, reply)
    assert result.verdict == "unscored" and result.score is None
    assert result.explanation.startswith("unparseable judge reply")


def test_no_reference_answer_is_unscored_without_calling_the_llm(context):
    result = _judge(context, "Correct", Sample(question_id="q", question="?"))
    assert result.verdict == "unscored" and "no reference answer" in result.explanation and FixedReply.seen == []


def test_parse_verdict():
    assert parse_verdict("incorrect") == "incorrect" and parse_verdict("CORRECT!") == "correct"
    assert parse_verdict("uncorrectable") is None


def test_generator_references_are_typed_for_plan_time_resolution():
    from ragassay import GeneratorRef
    from ragassay.plugins.grammar.llm_templates import GenerateOptions

    judge = GrammarLLMJudge.Options(generator={"name": "openai", "options": {"model": "m"}})
    assert type(judge.generator) is GeneratorRef and judge.generator.options == {"model": "m"}
    assert type(GenerateOptions(generator="local").generator) is GeneratorRef
    named = GrammarLLMJudge(GrammarLLMJudge.Options(generator="openai")).judge_id
    assert named == GrammarLLMJudge(GrammarLLMJudge.Options(generator={"name": "openai"})).judge_id
    assert named.startswith("grammar_llm:openai:")
