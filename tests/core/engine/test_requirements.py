"""The plan checks the dataset against what the listed metrics and judges need (``requires``), before any call.

No sample has a needed input: one line and exit code 2, no generator call, nothing stored. Some samples lack it:
a warning stored with the run, which completes. A component that declares nothing is not checked.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import ragassay
from ragassay import ConfigError, Generation, Generator, Metric, hookimpl
from ragassay.engine.requirements import EXAMPLES, InputCounts
from ragassay.engine.runner import plan_run
from ragassay.models import Sample
from ragassay.plugin_manager import load_plugins
from tests.conftest import QA, ragassay_cli, write_project

CONFIG = """
    [project]
    name = "requires"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [defaults]
    chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}

    [systems.counted]
    retriever = "keyword"
    generator = "t/counting"

    [evaluation]
    {evaluation}
"""


class Counting(Generator):
    """Answers with the first context; counts its calls (the far side: a paid model)."""

    name = "counting"
    calls = 0

    async def generate(self, request):
        type(self).calls += 1
        return Generation(text=request.contexts[0].text if request.contexts else "")


class Length(Metric):
    """A third-party metric that declares no inputs: the answer's length in words (a toy)."""

    name = "length"
    formula = "words(answer)"
    source = "toy"

    def score(self, sample, output):
        return float(len(output.answer.split()))


class Plugin:
    @hookimpl
    def register_generators(self, register):
        register(Counting)

    @hookimpl
    def register_metrics(self, register):
        register(Length)


def without(field: str, rows=QA, keep: tuple[str, ...] = ()) -> list[dict]:
    """The samples with ``field`` emptied, except those whose question id is in ``keep``."""
    return [row if row["question_id"] in keep else {**row, field: []} for row in rows]


def project(tmp_path: Path, evaluation: str, qa) -> Path:
    Counting.calls = 0
    return write_project(tmp_path, CONFIG.format(evaluation=evaluation), qa=qa)


def run(config: Path):
    return ragassay.run(config, plugins=[("t", Plugin())])


def test_a_listed_metric_no_sample_can_feed_is_refused_before_any_call_and_nothing_is_stored(tmp_path):
    config = project(tmp_path, 'metrics = ["token_recall", "exact_match"]', without("reference_answers"))
    with pytest.raises(ConfigError) as refused:
        run(config)
    message = str(refused.value)
    assert message == (
        "ragassay.toml: evaluation.metrics[0]: metric 'token_recall' needs reference_answers, and none of the "
        "dataset's 3 samples has any ([dataset] source 'files', path 'qa.jsonl'): add reference_answers to the "
        "samples, or remove 'token_recall' from [evaluation] metrics"
    )
    assert Counting.calls == 0
    assert not (tmp_path / "ragassay-results.db").exists()
    # the same project with the answers: the generator is called, once per sample
    write_project(tmp_path, CONFIG.format(evaluation='metrics = ["token_recall", "exact_match"]'), qa=QA)
    assert run(config).completed == len(QA) and Counting.calls == len(QA)


def test_a_judge_is_checked_and_named_by_its_place_in_the_config(tmp_path):
    config = project(tmp_path, 'metrics = ["k_precision"]\n    judges = ["match"]', without("reference_answers"))
    with pytest.raises(ConfigError, match=r"evaluation\.judges\[0\]: judge 'match' needs reference_answers.*"):
        run(config)
    assert Counting.calls == 0


def test_some_samples_lacking_an_input_give_a_stored_warning_and_the_run_completes(tmp_path):
    qa = without("reference_answers", keep=("q2",))
    config = project(tmp_path, 'metrics = ["exact_match", "k_precision"]\n    judges = ["match"]', qa)
    result = run(config)
    warning = "[evaluation]: exact_match, judge:match will be unscored on 2 of 3 samples: no reference_answers (e.g. 'q1', 'q3')"
    assert warning in result.warnings
    assert result.completed == len(QA) and result.failed == 0 and Counting.calls == len(QA)
    with sqlite3.connect(tmp_path / "ragassay-results.db") as db:
        stored = json.loads(db.execute("select warnings_json from runs").fetchone()[0])
        unscored = db.execute(
            "select count(*) from metric_values where metric = 'exact_match' and value is null"
        ).fetchone()[0]
    assert warning in stored and unscored == 2  # as the warning said


def test_unitxt_compat_metrics_are_said_to_score_0(tmp_path):
    qa = without("reference_context_ids", keep=("q1",))
    config = project(tmp_path, 'compat = "unitxt"\n    metrics = ["recall_at_k", "context_mrr"]', qa)
    (warning,) = [w for w in plan_of(config).warnings if "reference_context_ids" in w]
    assert warning == (
        '[evaluation]: recall_at_k, context_mrr will score 0 (compat = "unitxt") on 2 of 3 samples: no '
        "reference_context_ids (e.g. 'q2', 'q3')"
    )


def plan_of(config: Path):
    plan = plan_run(config, load_plugins([("t", Plugin())]).registry)
    plan.samples.close()
    return plan


def test_the_default_metrics_and_undeclared_metrics_are_not_checked(tmp_path):
    bare = [{"question_id": row["question_id"], "question": row["question"]} for row in QA]
    config = project(tmp_path, "judges = []", bare)  # the default metrics need references: unscored, as before
    assert not [w for w in plan_of(config).warnings if "will be unscored" in w]
    config = project(tmp_path, 'metrics = ["t/length"]', bare)  # declares nothing: runs on anything
    result = run(config)
    assert result.completed == len(QA) and result.metric_errors == 0 and Counting.calls == len(QA)


def test_graded_relevance_in_metadata_feeds_the_ir_metrics(tmp_path):
    graded = [{**row, "reference_context_ids": [], "metadata": {"relevance": {"corpus/alpha.md": 2}}} for row in QA]
    config = project(tmp_path, 'metrics = ["ndcg_at_k"]', graded)
    assert not [w for w in plan_of(config).warnings if "qrels" in w]
    config = project(tmp_path, 'metrics = ["ndcg_at_k"]', without("reference_context_ids"))
    with pytest.raises(ConfigError, match="'ndcg_at_k' needs qrels"):
        plan_of(config)


def test_a_run_of_systems_that_never_retrieve_warns_about_context_metrics(tmp_path):
    config = project(tmp_path, 'metrics = ["exact_match", "k_precision"]', QA)
    text = config.read_text().replace('retriever = "keyword"\n', 'rag = "no_retrieval"\n')
    config.write_text(text)
    (warning,) = [w for w in plan_of(config).warnings if "never retrieves" in w]
    assert warning == (
        "[evaluation]: k_precision needs the retrieved contexts, and every system (counted) declares it never "
        "retrieves: no output will have any"
    )


def test_counting_keeps_a_few_examples_whatever_the_number_of_samples():
    counts = InputCounts(["reference_answers", "answer", "qrels"])
    assert counts.names == ["reference_answers", "qrels"]  # the output's answer cannot be counted before the run
    for i in range(5000):
        refs = ["x"] if i % 2 else ["  "]  # a blank reference answer is none
        counts.observe(Sample(question_id=f"q{i}", question="?", reference_answers=refs))
    assert counts.samples == 5000 and counts.have == {"reference_answers": 2500, "qrels": 0}
    assert counts.lacking["reference_answers"] == ["q0", "q2", "q4"] and len(counts.lacking["qrels"]) == EXAMPLES


@pytest.mark.parametrize("command", ["run", "estimate"])
def test_the_cli_refuses_in_one_line_with_exit_2_and_calls_no_model(tmp_path, monkeypatch, command):
    pytest.importorskip("openai")
    from tests.servers.openai_chat import OpenAIChatServer

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-requires")
    with OpenAIChatServer() as server:
        generator = f'{{ name = "openai", options = {{ model = "gpt-4o-mini", base_url = "{server.url}/v1" }} }}'
        text = CONFIG.format(evaluation='metrics = ["exact_match"]').replace('"t/counting"', generator)
        config = write_project(tmp_path, text, qa=without("reference_answers"))
        result = ragassay_cli(command, str(config))
        assert result.returncode == 2, result.stderr
        assert "metric 'exact_match' needs reference_answers, and none of the dataset's 3 samples" in result.stderr
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert server.calls == 0
    assert not (tmp_path / "ragassay-results.db").exists()
