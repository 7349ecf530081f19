"""The agents' prompts quote their sources exactly, carry versions, and their replies parse (or fall back) as
documented: Self-Ask follow-up lines, intermediate answers, ReAct actions."""

from __future__ import annotations

from ragassay.reference_rags.agents_prompts import (
    DECOMPOSE_PROMPT,
    REACT_INSTRUCTION,
    REACT_PROMPT,
    READ_PROMPT,
    SELF_ASK_EXEMPLAR,
    fill_answers,
    parse_action,
    parse_intermediate,
    parse_plan,
    placeholders,
    prompt_version,
)

Q = "Where is the client that commissioned Project Falcon based?"


def test_the_cited_texts_are_quoted_and_the_prompts_versioned():
    assert SELF_ASK_EXEMPLAR in DECOMPOSE_PROMPT and SELF_ASK_EXEMPLAR.endswith(
        "So the final answer is: December 6, 1952"
    )
    # ReAct's instruction up to its list of actions is kept word for word
    shared = "Solve a question answering task with interleaving Thought, Action, Observation steps. Thought can reason"
    assert REACT_INSTRUCTION.startswith(shared) and REACT_PROMPT.startswith(shared)
    assert "(3) Finish[answer], which returns the answer and finishes the task.\n" in REACT_INSTRUCTION
    assert "(2) Finish[answer], which returns the answer and finishes the task.\n" in REACT_PROMPT
    versions = {prompt_version(p) for p in (DECOMPOSE_PROMPT, READ_PROMPT, REACT_PROMPT)}
    assert versions == {"self-ask-decompose/1", "self-ask-read/1", "react-search/1"}
    assert prompt_version("my own prompt {question}").startswith("custom:")


def test_follow_up_lines_parse_in_order_with_their_placeholders():
    reply = " Yes.\nFollow up: Which client commissioned Project Falcon?\nfollow-up: Where is #1 based?\n"
    plan = parse_plan(reply, Q, max_hops=4)
    assert plan.sub_questions == ["Which client commissioned Project Falcon?", "Where is #1 based?"]
    assert plan.fallback is None and plan.dropped == []
    assert placeholders(plan.sub_questions[1]) == [1]
    assert (
        fill_answers("Where is #1 based, and #2?", {1: "Northwind Traders"})
        == "Where is Northwind Traders based, and #2?"
    )


def test_no_follow_ups_is_the_question_itself_and_garbage_is_a_fallback():
    assert parse_plan(" No.\nSo the final answer is: Oslo", Q, 4).sub_questions == [Q]
    assert parse_plan(" No.", Q, 4).fallback is None
    garbage = parse_plan("The answer is probably Oslo.", Q, 4)
    assert garbage.sub_questions == [Q] and "no 'Follow up:' line" in garbage.fallback
    assert parse_plan("", Q, 4).fallback is not None


def test_follow_ups_past_max_hops_are_dropped_not_lost():
    plan = parse_plan("Follow up: a?\nFollow up: b?\nFollow up: c?", Q, max_hops=2)
    assert plan.sub_questions == ["a?", "b?"] and plan.dropped == ["c?"]


def test_intermediate_answers():
    assert parse_intermediate("Northwind Traders.\nMore text") == "Northwind Traders"
    assert parse_intermediate("Intermediate answer: Northwind Traders") == "Northwind Traders"
    assert parse_intermediate(" unknown ") is None and parse_intermediate("") is None


def test_react_actions():
    search = parse_action(" I need the client.\nAction 1: Search[Project Falcon client]\nObservation 1: made up")
    assert (search.kind, search.argument, search.thought) == ("search", "Project Falcon client", "I need the client.")
    finish = parse_action("It is Oslo.\nAction 3: finish[Oslo]")
    assert (finish.kind, finish.argument) == ("finish", "Oslo")
    assert parse_action("I think it is Oslo.").kind is None
    assert parse_action("Action 1: Search[]").kind is None  # an empty query is no search
    assert parse_action("").kind is None
