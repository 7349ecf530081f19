"""The public LLM judge base (ragassay.llm.LLMJudging, JudgeOptions, fill, one_verdict): what a judge author gets
without a model call. Asking (ask, ask_text, re-asks) is driven against a scripted server by the shipped judges'
tests (tests/plugins/judges/, tests/plugins/test_truthfulness.py) and the llm_judge starter's own tests."""

from __future__ import annotations

import asyncio
import re
from typing import Literal

import pytest
from pydantic import BaseModel, Field

import ragassay.llm
from ragassay import ConfigError, Judge, Metric
from ragassay.llm import JudgeOptions, JudgeReply, LLMJudging, fill, one_verdict
from ragassay.testing import registry_with, throwaway_context


class PoliteOptions(JudgeOptions):
    prompt_version: Literal["polite-1"] = Field("polite-1", description="Version of the prompt.")
    prompt: str = Field("Is {answer} polite?", description="The prompt.")


class PoliteJudge(LLMJudging, Judge):
    """A judge on the base (nothing but the base's parts)."""

    name = "polite"
    Options = PoliteOptions

    def prompt_text(self) -> str:
        return self.options.prompt


def polite(**options) -> PoliteJudge:
    return PoliteJudge(PoliteOptions(generator="openai", **options))


def test_the_base_is_public_lazily_and_every_name_says_how_to_use_it():
    for name in ("LLMJudging", "JudgeOptions", "fill", "one_verdict", "TEXT_RETRIES"):
        assert name in ragassay.llm.__all__
    for obj in (LLMJudging, JudgeOptions, fill, one_verdict, LLMJudging.ask, LLMJudging.ask_text, LLMJudging.unusable):
        assert len((obj.__doc__ or "").split()) > 10, obj
    assert "class PoliteJudge(LLMJudging, Judge)" in ragassay.llm.judge_base.__doc__


def test_fill_substitutes_the_named_fields_once_and_keeps_other_braces():
    assert fill("Q: {question} {x} {'json': 1}", {"question": "a {x} b"}) == "Q: a {x} b {x} {'json': 1}"
    assert fill("no fields {here}", {}) == "no fields {here}"


@pytest.mark.parametrize("said, word", [("YES", "yes"), (" no. ", "no"), ("**Yes**", "yes"), ("'No'!", "no")])
def test_one_verdict_reads_a_lone_word(said, word):
    assert one_verdict(said, ["yes", "no"]) == word


@pytest.mark.parametrize("said", ["NOT KNOWN", "yes or no", "not yes", "", "maybe"])
def test_one_verdict_refuses_anything_else_with_the_reason(said):
    with pytest.raises(ValueError, match="must be exactly one of yes, no"):
        one_verdict(said, ["yes", "no"])


def test_options_without_the_judge_fields_are_refused_when_the_class_is_defined():
    class Bare(BaseModel):
        threshold: float = 0.5

    with pytest.raises(TypeError, match="Options lacks generator, params, prompt_version.*JudgeOptions"):

        class _Broken(LLMJudging, Metric):
            Options = Bare

    with pytest.raises(TypeError, match="lacks prompt_version"):

        class _Unversioned(LLMJudging, Judge):
            Options = JudgeOptions


def test_identity_names_the_protocol_and_digests_what_shapes_the_request():
    base = polite().identity
    assert base.startswith("polite:openai:polite-1:") and len(base.rsplit(":", 1)[1]) == 8
    assert base == polite().identity  # same options, same identity (across processes: a sha256 digest)
    changed = [
        polite(prompt="Is {answer} rude?"),
        polite(params={"temperature": 0.7}),
        PoliteJudge(PoliteOptions(generator={"name": "openai", "options": {"model": "gpt-4o"}})),
    ]
    assert len({base, *(judge.identity for judge in changed)}) == 4
    with pytest.raises(ValueError, match="polite-1"):
        polite(prompt_version="polite-2")  # a fixed literal: another version is a configuration error


def test_a_judge_that_requires_chat_refuses_a_plain_generator_by_name(tmp_path):
    class ChatOnly(PoliteJudge):
        """Needs a chat-capable judge model."""

        name = "chat_only"
        requires_chat = True

    context = throwaway_context(tmp_path, registry=registry_with())
    plain = PoliteJudge(PoliteOptions(generator="extractive"), context=context)
    assert plain.judge_model() is plain.judge_model()  # built once
    chat_only = ChatOnly(PoliteOptions(generator="extractive"), context=context)
    with pytest.raises(ConfigError, match="judge chat_only: generator 'extractive' does not support chat"):
        chat_only.judge_model()


def test_a_plain_generator_without_a_verdict_is_re_asked_then_unusable(tmp_path):
    """The extractive reader never says yes or no: ask_text re-asks it, then gives up; nothing is guessed."""
    context = throwaway_context(tmp_path, registry=registry_with())
    judge = PoliteJudge(PoliteOptions(generator="extractive"), context=context)
    messages = [{"role": "user", "content": "Salmon swim upstream to spawn."}]
    reply = asyncio.run(judge.ask_text(messages, ["yes", "no"]))
    assert reply.parsed is None and reply.error.endswith("gave up after 3 replies")
    unscored = judge.unusable(reply, "politeness reply")
    assert unscored.reason == f"politeness reply not usable: {reply.error}"
    assert unscored.details == {"raw": reply.raw, "error": reply.error, "judge": judge.identity}
    assert judge.unusable(JudgeReply(None, "?", "bad")).reason == "judge reply not usable: bad"


EXEMPLARS = [
    {"question": "Where?", "answer": "In Zürich.", "reference": "Zürich", "verdict": "correct"},
    {"question": "When?", "answer": "In 1999.", "verdict": "incorrect", "note": "the year is 2001"},
]


def test_exemplars_derive_the_prompt_version_and_change_the_identity():
    from pydantic import ValidationError

    from ragassay.llm import Exemplar, exemplar_version

    plain, shown = polite(), polite(exemplars=EXEMPLARS)
    derived = exemplar_version("polite-1", [Exemplar(**e) for e in EXEMPLARS])
    assert plain.options.prompt_version == "polite-1" and shown.options.prompt_version == derived
    assert derived.startswith("polite-1+ex-") and shown.identity != plain.identity
    assert polite(exemplars=EXEMPLARS, prompt_version=derived).options == shown.options  # the snippet's form
    reordered = polite(exemplars=EXEMPLARS[::-1]).options.prompt_version
    assert reordered != derived  # the order of exemplars is part of the prompt
    with pytest.raises(ValidationError, match=re.escape(f"with these exemplars it is '{derived}'")):
        polite(exemplars=EXEMPLARS, prompt_version="polite-1")
    with pytest.raises(ValidationError, match="without exemplars it is 'polite-1'"):
        polite(prompt_version=derived)
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        polite(exemplars=[{**EXEMPLARS[0], "label": 1}])


def test_exemplars_come_before_the_item_in_every_request():
    from ragassay.llm.exemplars import HEADER, with_exemplars

    judge = polite(exemplars=EXEMPLARS)
    messages = [{"role": "system", "content": "Be fair."}, {"role": "user", "content": "Is 'thanks' polite?"}]
    shown = with_exemplars(messages, judge.options.exemplars)
    assert shown[0] == messages[0] and messages[1]["content"] == "Is 'thanks' polite?"  # the input is not changed
    text = shown[1]["content"]
    assert text.startswith(HEADER) and text.endswith("### The item to judge\n\nIs 'thanks' polite?")
    assert "Question: Where?\nReference answer: Zürich\nAnswer: In Zürich.\nPeople's verdict: correct" in text
    assert "People's verdict: incorrect\nWhy: the year is 2001" in text
    assert with_exemplars(messages, []) == messages
