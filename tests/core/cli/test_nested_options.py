"""A bad option on a nested component (a retriever inside ``hybrid``, a generator inside a judge) is the same
clean exit 2 as at top level, before any work: one line naming the key path, no traceback, nothing stored."""

from __future__ import annotations

import pytest

from tests.conftest import BASIC_CONFIG, ragassay_cli, write_project

HYBRID = (
    BASIC_CONFIG
    + """
    [systems.hybrid]
    extends = "keyword"
    retriever = { name = "hybrid", options = { retrievers = ["keyword", { name = "bm25", options = { k1 = "high" } }] } }
"""
)

JUDGE = BASIC_CONFIG.replace(
    'judges = ["match"]',
    """judges = [{ name = "grammar_llm", options = { generator = { name = "openai", options = { modle = "gpt-4o-mini" } } } }]""",
)


@pytest.mark.parametrize(
    "config, key",
    [
        (HYBRID, "systems.hybrid.retriever.options.retrievers[1].options.k1"),
        (JUDGE, "evaluation.judges[0].options.generator.options.modle: unknown key; did you mean 'model'?"),
    ],
)
def test_bad_nested_option_is_a_clean_exit_2_before_any_work(tmp_path, config, key):
    path = write_project(tmp_path, config)
    result = ragassay_cli("run", "--config", str(path))
    assert result.returncode == 2, result.stderr
    assert key in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ragassay.toml: ")
    assert not (tmp_path / "ragassay-results.db").exists()


def test_unknown_nested_component_names_the_key_and_the_installed_ones(tmp_path):
    path = write_project(tmp_path, HYBRID.replace('{ name = "bm25", options = { k1 = "high" } }', '"bm52"'))
    result = ragassay_cli("run", "--config", str(path))
    assert result.returncode == 2
    assert (
        "systems.hybrid.retriever.options.retrievers[1]: no retriever named 'bm52'. Did you mean 'bm25'?"
        in result.stderr
    )
