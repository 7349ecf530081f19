"""The ragassay pytest plugin: run an evaluation inside a test and assert on it with statistical sense.

Registered as the ``pytest11`` entry point ``ragassay`` (or load it with
``pytest -p ragassay.testing.pytest_plugin``)::

    from ragassay.testing.pytest_plugin import assert_metric, assert_no_regression

    def test_quality(ragassay_run):
        run = ragassay.run("my_project")            # or: ragassay_run("my_project")
        assert_no_regression(run, baseline="bm25", metric="token_recall")
        assert_metric(run, "token_recall", at_least=0.5, system="hybrid")

    def test_my_rag(ragassay_evaluate):
        run = ragassay_evaluate(my_rag.answer, "qa.jsonl", metrics=["exact_match"])
        assert_metric(run, "exact_match", at_least=0.6)

Fixtures:

* ``ragassay_run(config, **options)``: :func:`ragassay.run` (resumes the stored run of an unchanged config:
  a second session calls no system and no model).
* ``ragassay_evaluate(rag, samples, **options)``: :func:`ragassay.testing.callables.evaluate` into
  ``ragassay_results``, the project named after the test.
* ``ragassay_results``: the results database of ``ragassay_evaluate``: ``--ragassay-results PATH``, the ini
  option ``ragassay_results``, or ``ragassay/results.db`` in pytest's cache folder (kept between sessions).
* ``ragassay_context`` and ``ragassay_project``: for testing a plugin (:mod:`ragassay.testing`).

See docs/pytest.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .assertions import assert_metric, assert_no_regression

__all__ = ["assert_metric", "assert_no_regression"]

HELP = "results database of ragassay_evaluate (default: ragassay/results.db in pytest's cache folder)"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--ragassay-results PATH`` and the ini option ``ragassay_results``."""
    group = parser.getgroup("ragassay")
    group.addoption("--ragassay-results", dest="ragassay_results", metavar="PATH", default=None, help=HELP)
    parser.addini("ragassay_results", HELP, default="")


def results_location(config: pytest.Config) -> Path:
    """Where ``ragassay_evaluate`` stores its runs: the command-line option, the ini option (relative to the
    rootdir), or the pytest cache folder."""
    option = config.getoption("ragassay_results")
    if option:
        return Path(option).resolve()
    ini = config.getini("ragassay_results")
    if ini:
        return (config.rootpath / ini).resolve()
    cache = getattr(config, "cache", None)
    folder = cache.mkdir("ragassay") if cache is not None else config.rootpath / ".ragassay-pytest"
    return Path(folder) / "results.db"


@pytest.fixture(scope="session")
def ragassay_results(pytestconfig: pytest.Config) -> Path:
    """The results database of ``ragassay_evaluate`` (kept between sessions, so runs resume)."""
    return results_location(pytestconfig)


@pytest.fixture
def ragassay_run() -> Callable[..., Any]:
    """``ragassay_run(config, **options)``: :func:`ragassay.run` (same options), returning the
    :class:`ragassay.Run`. An unchanged config resumes its stored run and calls no model."""
    from ..api import run

    return run


@pytest.fixture
def ragassay_evaluate(request: pytest.FixtureRequest, ragassay_results: Path) -> Callable[..., Any]:
    """``ragassay_evaluate(rag, samples, *, metrics=..., judges=(), project=<test name>, version="")``:
    run a RAG callable (or a mapping of system name to callable) on ``samples`` through the ``python``
    adapter and return the :class:`ragassay.Run` (:func:`ragassay.testing.callables.evaluate`)."""
    from .callables import evaluate

    default_project = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.name).strip("_") or "test"

    def run(rag: Any, samples: Any, **options: Any) -> Any:
        options.setdefault("project", default_project)
        return evaluate(rag, samples, results=ragassay_results, **options)

    return run


@pytest.fixture
def ragassay_context(tmp_path: Path) -> Any:
    """A throwaway :class:`ragassay.ComponentContext` in ``tmp_path`` with the installed plugins' registry
    (:func:`ragassay.testing.throwaway_context`)."""
    from . import registry_with, throwaway_context

    return throwaway_context(tmp_path, registry=registry_with())


@pytest.fixture
def ragassay_project(tmp_path: Path) -> Callable[..., Any]:
    """:func:`ragassay.testing.run_project` bound to ``tmp_path``: ``ragassay_project(config, plugins=..., ...)``."""
    from . import run_project

    def run(config: Any, **kwargs: Any) -> Any:
        return run_project(tmp_path, config, **kwargs)

    return run
