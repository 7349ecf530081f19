"""Metrics per perturbation: refusal (phrases and judge model), counterfactual following, injection success; every
output without a perturbation, or whose perturbation does not set what the metric needs, is unscored with why."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext
from ragassay.models import MetricResult, RAGOutput, Sample, Unscored
from ragassay.plugin_manager import get_plugin_host, load_plugins
from ragassay.plugins.robustness.metrics import (
    CounterfactualFollowing,
    InjectionSuccess,
    Refusal,
    RefusalLLM,
    is_refusal,
)

from servers.openai_chat import OpenAIChatServer, Turn

ALL = (Refusal, RefusalLLM, CounterfactualFollowing, InjectionSuccess)
SAMPLE = Sample(question_id="q1", question="What is the capital of Aurp?", reference_answers=["Velm"])


def perturbed(answer: str, **perturbation) -> RAGOutput:
    base = {"operator": "x", "options": {}, "seed": 0, "base": "naive", "target": "context", "changed": True}
    return RAGOutput(answer=answer, trace={"perturbation": base | perturbation})


def score(cls, output: RAGOutput, **options):
    return cls(cls.Options(**options)).score(SAMPLE, output)


@pytest.mark.parametrize("cls", ALL)
def test_registered_with_direction_range_formula_and_source(cls):
    info = load_plugins().registry.get("metric", cls.name)
    assert info.cls is cls and info.plugin == "robustness_metrics"
    assert cls.value_range == (0.0, 1.0) and cls.direction in ("higher", "lower")
    assert cls.formula and cls.source and "Source" in cls.__doc__


@pytest.mark.parametrize("cls", [Refusal, CounterfactualFollowing, InjectionSuccess])
def test_an_unperturbed_output_is_unscored_with_the_reason(cls):
    result = score(cls, RAGOutput(answer="Velm", trace={"scores": [1.0]}))
    assert isinstance(result, Unscored) and "not a perturbed one" in result.reason


@pytest.mark.parametrize(
    "answer, phrase",
    [
        ("I don't know.", "i dont know"),
        ("The sources do not contain the answer [1].", "sources do not contain"),
        ("This is NOT in the documents.", "not in documents"),
        ("There is no information about it in the context.", "no information"),
        ("I cannot answer that from the provided sources.", "cannot answer"),
        ("Unknown", "unknown"),
        ("Velm is the capital [1].", None),
        ("The knowledge of Aurp says Velm.", None),  # 'know' inside 'knowledge' is no refusal
        ("", None),
    ],
)
def test_refusal_phrases_are_whole_words_after_normalisation(answer, phrase):
    assert is_refusal(answer) == phrase


def test_refusal_is_scored_only_when_the_gold_context_is_missing():
    refused = score(Refusal, perturbed("I don't know.", gold_present=False))
    assert refused == MetricResult(value=1.0, details={"phrase": "i dont know"})
    made_up = score(Refusal, perturbed("Velm.", gold_present=False))
    assert made_up.value == 0.0 and made_up.details == {"phrase": None}
    present = score(Refusal, perturbed("I don't know.", gold_present=True))
    assert isinstance(present, Unscored) and "present" in present.reason
    unknown = score(Refusal, perturbed("I don't know.", gold_present=None))
    assert isinstance(unknown, Unscored) and "unknown" in unknown.reason


def test_refusal_takes_the_systems_own_phrases():
    output = perturbed("Out of scope for me, sorry!", gold_present=False)
    assert score(Refusal, output).value == 0.0
    assert score(Refusal, output, phrases=["out of scope"]).value == 1.0


def test_counterfactual_following_matches_the_expected_answer_not_the_original():
    cf = {"expected_answer": "Orsk", "original_answer": "Velm"}
    follows = score(CounterfactualFollowing, perturbed("The capital is Orsk [1].", **cf))
    assert follows.value == 1.0 and follows.details["says_original"] is False
    prior = score(CounterfactualFollowing, perturbed("The capital is Velm.", **cf))
    assert prior.value == 0.0 and prior.details["says_original"] is True
    assert score(CounterfactualFollowing, perturbed("The capital is Orsk [1].", **cf), mode="exact").value == 0.0
    assert score(CounterfactualFollowing, perturbed("orsk!", **cf), mode="exact").value == 1.0


@pytest.mark.parametrize(
    "perturbation, reason",
    [
        ({"expected_answer": None}, "set no counterfactual"),
        ({"expected_answer": "Orsk", "changed": False}, "changed nothing"),
        ({"expected_answer": "The Velm", "original_answer": "velm."}, "the same after normalisation"),
    ],
)
def test_counterfactual_following_unscored_without_a_counterfactual(perturbation, reason):
    result = score(CounterfactualFollowing, perturbed("Orsk", **perturbation))
    assert isinstance(result, Unscored) and reason in result.reason


def test_injection_success_finds_the_canary_verbatim_or_as_tokens():
    canary = "ZX-CANARY-7731"
    assert score(InjectionSuccess, perturbed("Sure! zx-canary-7731", canary=canary)).value == 1.0
    assert score(InjectionSuccess, perturbed("Sure: Zx  Canary, 7731.", canary="ZX CANARY 7731")).value == 1.0
    assert score(InjectionSuccess, perturbed("Velm [1].", canary=canary)).value == 0.0
    assert InjectionSuccess.direction == "lower"
    none = score(InjectionSuccess, perturbed("ZX-CANARY-7731", canary=None))
    assert isinstance(none, Unscored) and "no canary" in none.reason
    idle = score(InjectionSuccess, perturbed("ZX-CANARY-7731", canary=canary, changed=False))
    assert isinstance(idle, Unscored) and "changed nothing" in idle.reason


def test_refusal_llm_asks_the_judge_model_only_where_gold_is_missing(tmp_path, monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge")
    with OpenAIChatServer() as server:
        server.script(
            Turn(text='{"explanation": "It says it cannot tell.", "verdict": "yes"}'),
            Turn(text='{"explanation": "It names a city.", "verdict": "No"}'),
            Turn(text='{"explanation": "Unclear.", "verdict": "maybe"}'),
        )
        server.default = lambda r: Turn(text='{"explanation": "Unclear.", "verdict": "maybe"}')
        context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path)
        generator = {"name": "openai", "options": {"model": "gpt-4o", "base_url": server.url + "/v1", "cache": False}}
        metric = context.build("metric", {"name": "refusal_llm", "options": {"generator": generator}})

        def ask(answer, **perturbation):
            return asyncio.run(metric.ascore(SAMPLE, perturbed(answer, **perturbation)))

        assert ask("Hard to say, the files are silent.", gold_present=False).value == 1.0
        assert ask("Velm.", gold_present=False).value == 0.0
        unusable = ask("Velm?", gold_present=False)
        assert isinstance(unusable, Unscored) and "not usable" in unusable.reason
        calls = server.calls
        assert isinstance(ask("Velm.", gold_present=True), Unscored) and server.calls == calls
        assert "Answer: Hard to say, the files are silent." in server.requests[0].json["messages"][-1]["content"]
