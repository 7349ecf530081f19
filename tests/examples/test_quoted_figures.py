"""The figures the READMEs and docs quote from the examples are what a fresh run prints (issue 38, item 11).

Each quoted output is marked with the commands that print it (:mod:`quoted_figures`). The fast examples
(``top_k``, ``quickstart``) are rerun whole, and so is Aurp's conversations example (offline, seconds). Aurp's
dense systems embed the corpus on the CPU (minutes on a loaded machine, and the embedding model package), so the
suite reruns its two lexical systems only: a system's
rows (its cells and intervals, its GRAMMAR counts, its blame) and the keyword hypothesis table depend on that
system's outputs alone, so they are checked there; the verdicts (Holm over all 12 comparisons) and the dense
and hybrid rows need the whole run, which ``benchmarks/example_figures.py`` makes and checks.
"""

from __future__ import annotations

import pytest
from quoted_figures import REPO, Session, copy_example, examples_named, missing, pages, quotes, system_rows

FAST = {"top_k", "quickstart"}
LEXICAL = {"keyword", "bm25"}


def _all_quotes():
    return [quote for page in pages() for quote in quotes(page)]


def _conversations(quote) -> bool:
    """Whether the quote is of Aurp's conversations example (offline and fast: rerun whole)."""
    return any("examples/aurp/conversations.toml" in command for command in quote.commands)


def test_each_quote_names_ragassay_commands_of_an_example():
    found = _all_quotes()
    assert {q.page for q in found} >= {"examples/aurp/README.md", "docs/statistics.md"}
    for quote in found:
        assert quote.text.strip(), quote.where
        assert all(c.startswith("ragassay ") for c in quote.commands), quote.where
        named = examples_named(quote)
        assert named and all((REPO / "examples" / name).is_dir() for name in named), quote.where


def test_the_masks_keep_every_computed_figure():
    printed = "verdicts, run 801125e7: +0.178 (99.58% CI +0.145 to +0.212) in 37.7s │ 0.0005 │ 0.612 (832) │"
    assert missing("verdicts, run ef80cfd7: +0.178 (99.58% CI ... in 0.7s │ 0.0009 │ 0.612 (832)", printed) == []
    assert missing("+0.179 (99.58% CI", printed) == ["+0.179 (99.58% CI"]  # a figure off by 0.001 is caught
    assert missing("0.612 (832) ... +0.178", printed) == ["+0.178"]  # and the order counts


@pytest.mark.slow
def test_the_fast_examples_print_what_is_quoted(tmp_path):
    fast = [q for q in _all_quotes() if examples_named(q) <= FAST]
    assert fast
    for name in FAST:
        copy_example(name, tmp_path)
    session = Session(tmp_path)
    for quote in fast:
        assert missing(quote.text, session.output(quote.commands)) == [], quote.where


@pytest.mark.slow
def test_aurps_lexical_rows_and_hypothesis_table_are_as_quoted(tmp_path):
    folder = copy_example("aurp", tmp_path)
    config = (folder / "ragassay.toml").read_text(encoding="utf-8")
    start, end = config.index("[systems.dense]"), config.index("[evaluation]")
    (folder / "ragassay.toml").write_text(config[:start] + config[end:], encoding="utf-8")
    session = Session(tmp_path)
    aurp = [q for q in _all_quotes() if examples_named(q) == {"aurp"} and not _conversations(q)]
    assert len(aurp) >= 3
    for quote in aurp:
        table = quote.text.lstrip().startswith("|")  # the markdown hypothesis table: keyword's alone
        quoted = quote.text if table else system_rows(quote.text, LEXICAL)
        assert quoted.strip(), quote.where
        assert missing(quoted, session.output(quote.commands)) == [], quote.where


@pytest.mark.slow
def test_aurps_conversations_print_what_is_quoted(tmp_path):
    copy_example("aurp", tmp_path)
    session = Session(tmp_path)
    found = [q for q in _all_quotes() if _conversations(q)]
    assert {q.page for q in found} >= {"docs/conversations.md"}
    for quote in found:
        assert missing(quote.text, session.output(quote.commands)) == [], quote.where
