"""ragassay.testing: the helpers a plugin author tests with, used on the example plugin package's module."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from ragassay import PluginError, hookimpl, testing
from ragassay.plugins.keyword import KeywordRetriever
from ragassay.registry import Registry

from conftest import PACKAGES


def example_plugin():
    """The example package's module, loaded from its source (no install needed)."""
    path = PACKAGES / "ragassay_example_plugin" / "src" / "ragassay_example" / "__init__.py"
    spec = importlib.util.spec_from_file_location("ragassay_example_inprocess", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_registry_with_names_a_module_plugin_after_its_module():
    registry = testing.registry_with(("example", example_plugin()), entry_points=False)
    assert isinstance(registry, Registry)
    assert registry.get("metric", "example/answer_words").cls.name == "answer_words"
    assert [i.name for i in testing.registry_with(example_plugin(), entry_points=False).of_kind("metric")] == [
        "ragassay_example_inprocess/answer_words"
    ]


def test_registry_with_raises_when_the_plugin_fails():
    class Bad:
        @hookimpl
        def register_retrievers(self, register):
            register(object)

    with pytest.raises(PluginError, match="plugin 'bad' failed to load: PluginError: .*not a subclass"):
        testing.registry_with(("bad", Bad()), entry_points=False)


def test_component_by_class_and_by_name():
    keyword = testing.component("retriever", KeywordRetriever, count="occurrences")
    assert keyword.options.count == "occurrences" and keyword.context.registry is not None
    longest = testing.component("retriever", "example/longest", plugins=[("example", example_plugin())])
    longest.index(
        testing.component("chunker", "recursive").chunk(
            __import__("ragassay").Document(id="d", text="short. " + "a much longer sentence " * 40)
        )
    )
    assert longest.retrieve("q", 1)[0].rank == 1
    with pytest.raises(TypeError, match="not a metric"):
        testing.component("metric", KeywordRetriever)


def test_run_project_runs_a_plugin_metric_and_reads_the_values_back(tmp_path):
    result = testing.run_project(
        tmp_path,
        {
            "systems": {"kw": {"retriever": "keyword", "generator": "extractive", "options": {"top_k": 1}}},
            "evaluation": {"metrics": ["example/answer_words", "exact_match"]},
        },
        plugins={"example": example_plugin()},
        corpus={"a.md": "Salmon swim upstream in autumn.", "b.md": "Bees make honey."},
        samples=[{"question_id": "q1", "question": "What do bees make?", "reference_answers": ["honey"]}],
    )
    assert result.failed == 0 and (tmp_path / "ragassay.toml").is_file()
    words = result.metric("kw", "q1", "example/answer_words")
    assert words == float(len(result.outputs[("kw", "q1")].answer.split())) and words > 0
    assert ("kw", "q1", "exact_match") in result.metrics


def test_fixtures_come_with_the_pytest_plugin(ragassay_context, ragassay_project, tmp_path):
    assert ragassay_context.project_dir == tmp_path and ragassay_context.registry.get("retriever", "bm25")
    result = ragassay_project(
        {"systems": {"bm25": {"retriever": "bm25", "generator": "extractive"}}},
        corpus={"a.md": "Gamma rays come from decay."},
        samples=[{"question_id": "g", "question": "Where do gamma rays come from?", "reference_answers": ["decay"]}],
    )
    assert result.failed == 0 and ("bm25", "g") in result.outputs


def test_toml_writer_round_trips_through_the_config_reader():
    import tomllib

    data = {"project": {"name": 't"q\\n'}, "systems": {"a b": {"options": {"k": 1, "on": True, "x": [1.5, "é"]}}}}
    assert tomllib.loads(testing.to_toml(data)) == data


def test_importing_the_module_does_not_need_pytest():
    code = (
        "import sys; sys.modules['pytest'] = None; import ragassay.testing as t; "
        "assert 'pytest' not in vars(t) and not hasattr(t, 'ragassay_context'); print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
