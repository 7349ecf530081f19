"""What the shipped metrics and judges declare they need (``requires``) is what they read.

For every shipped metric and judge and every input of the sample it declares (reference answers, reference
contexts, reference context ids, relevance judgements), a sample without that input gives an unscored value
that says so; the model-free ones score the full sample. (That every shipped component declares ``requires`` at
all, and that docs/metrics.md lists it, is tests/test_meta.py's.)
"""

from __future__ import annotations

import asyncio

import pytest

from ragassay import Generator, Hop, Judgement, Step, ToolCall, Turn, Unscored, hookimpl, testing
from ragassay.models import RAGOutput, Sample, checked_inputs
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.claims.metrics import METRICS, inputs_of
from ragassay.plugins.claims.specs import SPECS

SHIPPED = ("ragassay.plugins.", "ragassay.reference_rags.")


class NoCall(Generator):
    """A judge model that must not be asked: a value unscored for a missing input is decided before any call."""

    name = "nocall"
    supports_chat = True
    calls = 0

    async def generate(self, request):
        type(self).calls += 1
        raise AssertionError("the judge model was called")

    async def chat(self, messages, **kwargs):
        type(self).calls += 1
        raise AssertionError("the judge model was called")


class Plugin:
    @hookimpl
    def register_generators(self, register):
        register(NoCall)


FULL = Sample(
    question_id="q1",
    question="Who built the alpha reactor?",
    reference_answers=["Ada Lovelace Labs"],
    reference_contexts=["The alpha reactor was built in 1999 by Ada Lovelace Labs."],
    reference_context_ids=["alpha"],
    group_id="g1",
    conversation_id="c1",  # a conversation's second turn, so that the conversation metrics have what they need
    turn=2,
    history=[
        Turn(speaker="user", text="I study reactors. Which reactors are there?"),
        Turn(speaker="agent", text="There is the alpha reactor."),
    ],
    answerability="answerable",
    hops=[  # a two-hop question, so that the per-hop metrics and step_blame have their gold
        Hop(index=1, description="Reactor", reference_context_ids=["alpha"]),
        Hop(index=2, description="Reactor -> Builder", reference_context_ids=["alpha"]),
    ],
    expected_tool_calls=[ToolCall(name="lookup", arguments={"reactor": "alpha"})],  # for the trajectory metrics
    metadata={  # and a GRAMMAR follow-up chain's turn, so that turn_blame has its chain
        "chain": {
            "sql": "SELECT Builder FROM Reactor WHERE Name = 'alpha'",
            "kind": "entity",
            "standalone_question": "Who built the alpha reactor?",
            "refers_to": None,
            "depends_on_history": False,
            "earlier": [{"question": "Which reactors are there?", "standalone_question": "", "refers_to": None}],
            "rows": ["Ada Lovelace Labs"],
            "missing_column": None,
        }
    },
)
OUTPUT = RAGOutput(
    trajectory=[  # an agent's: one retrieval that finds both hops' gold, the expected tool call, the answer
        Step(id="s1", kind="retrieval", query="alpha reactor", context_ids=["alpha"], document_ids=["alpha"]),
        Step(id="s2", kind="tool_call", name="lookup", arguments={"reactor": "alpha"}, result="Ada Lovelace Labs"),
        Step(id="s3", kind="answer", output="Ada Lovelace Labs built it [1]."),
    ],
    answer="Ada Lovelace Labs built it [1].",
    contexts=["The alpha reactor was built in 1999 by Ada Lovelace Labs."],
    context_ids=["alpha"],
    context_document_ids=["alpha"],
    retrieved=True,
)
#: What an unscored reason says when the input is missing.
SAYS = {
    "reference_answers": ("reference_answers", "reference answer"),
    "reference_contexts": ("reference_contexts",),
    "reference_context_ids": ("reference_context_ids",),
    "qrels": ("reference_context_ids",),
    "conversation_id": ("conversation_id",),
    "history": ("history",),
    "answerability": ("answerability",),
    "hops": ("Sample.hops",),
    "expected_tool_calls": ("expected_tool_calls",),
}
#: The LLM claim metrics extract the answer's claims before they look for the reference: their declarations are
#: the offline ones' (the same check lists) plus the question, tested below.
LLM_CLAIMS = {cls.name for cls in METRICS if not cls.offline}


def shipped() -> list:
    registry = load_plugins().registry
    found = [
        info
        for kind in ("metric", "judge")
        for info in registry.of_kind(kind)
        if info.cls.__module__.startswith(SHIPPED) and checked_inputs(info.cls.requires) and info.name not in LLM_CLAIMS
    ]
    assert len(found) >= 25
    return found


def lacking(name: str) -> Sample:
    if name == "qrels":
        return FULL.model_copy(update={"reference_context_ids": [], "metadata": {}})
    return FULL.model_copy(update={name: [] if isinstance(getattr(FULL, name), list) else None})


def value(info, sample: Sample) -> Unscored | Judgement | object:
    options = {"generator": "t/nocall"} if "generator" in info.cls.Options.model_fields else {}
    built = testing.component(info.kind, info.name, plugins=[("t", Plugin())], **options)
    if info.kind == "judge":
        return asyncio.run(built.judge(sample, OUTPUT))
    return asyncio.run(built.ascore(sample, OUTPUT))


def unscored_reason(result) -> str | None:
    if isinstance(result, Unscored):
        return result.reason
    if isinstance(result, Judgement) and result.score is None:
        return result.explanation
    return None


@pytest.mark.parametrize("info", shipped(), ids=lambda info: info.name)
def test_a_sample_without_a_declared_input_is_unscored_with_the_reason(info):
    NoCall.calls = 0
    for name in checked_inputs(info.cls.requires):
        reason = unscored_reason(value(info, lacking(name)))
        assert reason is not None, f"{info.name} scored a sample without {name}"
        assert any(word in reason for word in SAYS[name]), reason
    assert NoCall.calls == 0  # decided before any model call


@pytest.mark.parametrize(
    "info", [i for i in shipped() if "generator" not in i.cls.Options.model_fields], ids=lambda i: i.name
)
def test_the_model_free_ones_score_the_full_sample(info):
    assert unscored_reason(value(info, FULL)) is None


def test_the_llm_claim_metrics_need_what_the_offline_ones_need_and_the_question():
    registry = load_plugins().registry
    assert len(LLM_CLAIMS) == len(SPECS)
    for name in LLM_CLAIMS:  # by name: a module imported afresh by another test makes classes anew
        llm, offline = (registry.get("metric", n).cls for n in (name, f"{name}_offline"))
        assert llm.requires == offline.requires | {"question"} and "question" not in offline.requires
        assert ("answer" in llm.requires) == llm.uses_answer


def test_options_that_read_more_need_more():
    registry = load_plugins().registry
    faithfulness = registry.get("metric", "rc_faithfulness_offline").cls
    assert faithfulness.required(faithfulness.Options()) == inputs_of(["retrieved2response"], True)
    figure = faithfulness.Options(readings={"faithfulness": "figure"})
    assert "reference_answers" in faithfulness.required(figure)  # the figure's reading also reads retrieved2answer
    ndcg = registry.get("metric", "ndcg_at_k").cls
    assert ndcg.required(ndcg.Options()) == {"qrels", "context_ids"}
    assert ndcg.required(ndcg.Options(level="document")) == {"qrels", "context_ids", "context_document_ids"}
