"""The pytest plugin: assertions that pass and fail on purpose with scripted RAG callables, their messages, and
a second pytest session that calls nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points

import pytest

from ragassay import RAGOutput
from ragassay.testing.callables import evaluate
from ragassay.testing.pytest_plugin import assert_metric, assert_no_regression

CITIES = {"France": "Paris", "Germany": "Berlin", "Italy": "Rome", "Spain": "Madrid"}
SAMPLES = [
    {
        "question_id": f"q{i:02d}",
        "question": f"What is the capital of {country}? (form {i})",
        "reference_answers": [city],
    }
    for i, (country, city) in enumerate(list(CITIES.items()) * 5)
]


def good(question: str) -> str:
    return next(city for country, city in CITIES.items() if country in question)


def slightly_worse(question: str) -> str:
    return "Lyon" if "form 0)" in question else good(question)


async def much_worse(sample) -> RAGOutput:
    wrong = int(sample.question_id[1:]) % 2 == 0
    return RAGOutput(answer="Lyon" if wrong else sample.reference_answers[0])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    results = tmp_path_factory.mktemp("plugin") / "results.db"
    systems = {"good": good, "slightly": slightly_worse, "bad": much_worse}
    return evaluate(systems, SAMPLES, results=results, metrics=["exact_match", "token_recall"])


def test_no_regression_decides_as_the_gate_does(run):
    assert_no_regression(run, "good", "exact_match", system="good")  # the same answers: shown within the margin
    with pytest.raises(AssertionError) as noisy:  # 1 of 20 worse: 20 samples cannot show a 2-point margin
        assert_no_regression(run, "good", "exact_match", system="slightly")
    assert str(noisy.value).startswith("inconclusive (fails unless on_inconclusive='pass') on exact_match")
    assert_no_regression(run, "good", "exact_match", system="slightly", on_inconclusive="pass")
    assert_no_regression(run, "good", "exact_match", system="slightly", mode="superiority")
    with pytest.raises(AssertionError) as failure:
        assert_no_regression(run, "good", "exact_match", system="bad")
    message = str(failure.value)
    assert message.startswith("regression on exact_match: bad against good (non-inferiority, margin 0.02): ")
    assert "1.0000 -> 0.5000, difference -0.5000" in message and "n 20, differing on 10" in message
    assert "samples where bad got worse (question id: good -> bad, question, answer):" in message
    assert "    q00: 1 -> 0  What is the capital of France? (form 0)  answer: Lyon" in message
    assert len(message.splitlines()) <= 8  # a few lines, not a dump
    with pytest.raises(AssertionError, match="regression on exact_match: bad against good"):
        assert_no_regression(run, "good", "exact_match", on_inconclusive="pass")  # every other system, one family


def test_a_failing_assertion_shows_its_message_not_the_helpers_source(tmp_path):
    test = tmp_path / "test_drop.py"
    test.write_text(
        textwrap.dedent(
            """
            from ragassay.testing.callables import evaluate
            from ragassay.testing.pytest_plugin import assert_no_regression

            SAMPLES = [{"question_id": f"q{i}", "question": f"q {i}", "reference_answers": ["yes"]} for i in range(12)]

            def test_drop(tmp_path):
                run = evaluate({"a": lambda q: "yes", "b": lambda q: "no"}, SAMPLES, results=tmp_path / "r.db",
                               metrics=["exact_match"])
                assert_no_regression(run, "a", "exact_match")
            """
        ),
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "pytest", "-q", *plugin_option(), "-p", "no:cacheprovider", str(test)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "regression on exact_match: b against a" in done.stdout, done.stdout
    assert "def assert_no_regression" not in done.stdout and "fail_inconclusive" not in done.stdout


def test_no_regression_against_another_run(tmp_path):
    results = tmp_path / "results.db"
    before = evaluate(good, SAMPLES, results=results, metrics=["exact_match"], project="before")
    after = evaluate(much_worse, SAMPLES, results=results, metrics=["exact_match"], project="after")
    assert_no_regression(before, after, "exact_match")
    with pytest.raises(AssertionError, match="regression on exact_match: rag against rag"):
        assert_no_regression(after, before, "exact_match")


def test_assert_metric_uses_the_lower_confidence_bound(run):
    assert_metric(run, "exact_match", at_least=0.9, system="good")
    assert_metric(run, "exact_match", at_least=0.2, system="bad")
    with pytest.raises(AssertionError) as failure:
        assert_metric(run, "exact_match", at_least=0.45, system="bad")  # the mean 0.5 is above, the bound is not
    message = str(failure.value)
    assert message.startswith("exact_match of bad: 95% lower bound 0.")
    assert "wanted at least 0.45" in message and "mean 0.5000, 95% CI [" in message and "n 20 scored" in message
    assert "5 worst samples of bad on exact_match" in message and "answer: Lyon" in message
    with pytest.raises(AssertionError, match="exact_match of bad"):
        assert_metric(run, "exact_match", at_least=0.45)  # every system


def test_bad_arguments_are_clear(run):
    from ragassay.errors import ConfigError

    with pytest.raises(ConfigError, match="no metric 'f1'. Its metrics: exact_match, token_recall"):
        assert_metric(run, "f1", at_least=0.5)
    with pytest.raises(ConfigError, match="exactly one of at_least= or at_most="):
        assert_metric(run, "exact_match")
    with pytest.raises(ConfigError, match="baseline 'nope' is not a system"):
        assert_no_regression(run, "nope", "exact_match")


TEST_FILE = """
import os
from ragassay.testing.pytest_plugin import assert_no_regression

SAMPLES = [{"question_id": f"q{i}", "question": f"Is {i} even?", "reference_answers": [str(i % 2 == 0)]}
           for i in range(16)]

def parity(question):
    with open(os.environ["CALLS"], "a") as calls:
        calls.write("x")
    return str(int(question.split()[1]) % 2 == 0)

async def always_true(sample):
    with open(os.environ["CALLS"], "a") as calls:
        calls.write("x")
    return "True"

def test_parity_holds(ragassay_evaluate):
    run = ragassay_evaluate({"parity": parity, "lazy": always_true}, SAMPLES, metrics=["exact_match"])
    assert_no_regression(run, "lazy", "exact_match")

def test_lazy_regresses(ragassay_evaluate):
    run = ragassay_evaluate({"parity": parity, "lazy": always_true}, SAMPLES, metrics=["exact_match"])
    assert_no_regression(run, "parity", "exact_match")
"""


def plugin_option() -> list[str]:
    """``-p ragassay.testing.pytest_plugin`` until the ``pytest11`` entry point is installed (loading both fails)."""
    installed = any(ep.name == "ragassay" for ep in entry_points(group="pytest11"))
    return [] if installed else ["-p", "ragassay.testing.pytest_plugin"]


@pytest.mark.slow
def test_second_session_calls_nothing(tmp_path):
    (tmp_path / "test_quality.py").write_text(textwrap.dedent(TEST_FILE), encoding="utf-8")
    calls = tmp_path / "calls.txt"
    command = [sys.executable, "-m", "pytest", "-q", *plugin_option(), "-p", "no:cacheprovider"]
    command += ["--ragassay-results", str(tmp_path / "db" / "results.db"), "test_quality.py"]
    env = {**os.environ, "CALLS": str(calls)}
    outputs = []
    for _ in range(2):
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        outputs.append(done.stdout + done.stderr)
        assert done.returncode == 1, outputs[-1]
        assert "1 failed, 1 passed" in outputs[-1]
        assert "regression on exact_match: lazy against parity" in outputs[-1]
    assert calls.read_text() == "x" * 32, outputs  # 2 systems x 16 samples, in the first test of session 1 only
    assert (tmp_path / "db" / "projects" / "test_parity_holds" / "ragassay.toml").is_file()
