"""The vocabulary of inputs (``ragassay.models.INPUTS``) and the registry's check of what a metric or judge declares."""

from __future__ import annotations

import pytest

from ragassay import Judge, Metric, PluginError
from ragassay.models import INPUTS, Sample, checked_inputs, unknown_inputs
from ragassay.registry import Registry


def metric(requires) -> type[Metric]:
    return type("Declared", (Metric,), {"name": "declared", "requires": requires, "__doc__": "A toy."})


def test_a_declared_input_must_be_a_name_of_the_vocabulary():
    registry = Registry()
    with pytest.raises(PluginError, match=r"requires names 'reference_answer', which is no input; the inputs are "):
        registry.add("metric", metric(frozenset({"reference_answer"})), plugin="p", distribution="p", version="1")
    with pytest.raises(PluginError, match="it must be a frozenset of input names"):
        registry.add("metric", metric("answer"), plugin="p", distribution="p", version="1")  # not a str's letters
    judge = type("Declared", (Judge,), {"name": "declared", "requires": frozenset({"answers"})})
    with pytest.raises(PluginError, match="'answers', which is no input"):
        registry.add("judge", judge, plugin="p", distribution="p", version="1")
    assert registry.add("metric", metric(frozenset({"answer", "qrels"})), plugin="p", distribution="p", version="1")
    assert registry.add("metric", metric(frozenset()), plugin="q", distribution="q", version="1")  # nothing declared


def test_every_name_says_where_it_lives_and_the_samples_inputs_say_when_a_sample_has_them():
    for name, spec in INPUTS.items():
        assert spec.side in ("sample", "output", "metrics") and spec.description
        assert (spec.present is not None) == (spec.side == "sample" and name != "question"), name
    assert checked_inputs(["answer", "qrels", "question", "reference_answers"]) == ["reference_answers", "qrels"]
    assert unknown_inputs(["answer", "answers"]) == ["answers"]


@pytest.mark.parametrize(
    ("name", "has", "lacks"),
    [
        ("reference_answers", {"reference_answers": ["Ada"]}, {"reference_answers": ["", "  "]}),
        ("reference_contexts", {"reference_contexts": ["gold"]}, {"reference_contexts": []}),
        ("reference_context_ids", {"reference_context_ids": ["d1"]}, {"reference_context_ids": [""]}),
        ("qrels", {"metadata": {"relevance": {"d1": 2}}}, {"metadata": {"relevance": {}}}),
        ("qrels", {"reference_context_ids": ["d1"]}, {}),
        ("group_id", {"group_id": "g1"}, {"group_id": None}),
    ],
)
def test_when_a_sample_has_an_input(name, has, lacks):
    present = INPUTS[name].present
    assert present(Sample(question_id="q", question="?", **has))
    assert not present(Sample(question_id="q", question="?", **lacks))
