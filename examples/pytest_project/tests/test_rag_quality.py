"""Quality tests of the project with the ragassay pytest plugin (docs/pytest.md).

The first session runs both systems and stores the results in ../ragassay-results.db; later sessions resume
that run and call nothing unless the config, corpus or questions changed.
"""

from pathlib import Path

import pytest

from ragassay.testing.pytest_plugin import assert_metric, assert_no_regression

PROJECT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def run():
    import ragassay

    return ragassay.run(PROJECT)


@pytest.mark.parametrize("metric", ["token_recall", "contains_answer", "context_mrr"])
def test_bm25_is_no_worse_than_keyword(run, metric):
    assert_no_regression(run, baseline="keyword", metric=metric, system="bm25")


def test_bm25_finds_the_right_document(run):
    assert_metric(run, "context_mrr", at_least=0.7, system="bm25")


def test_run_has_no_failures(ragassay_run):
    run = ragassay_run(PROJECT)  # the fixture form: resumes the same stored run
    assert run.failed == 0 and not run.failures
