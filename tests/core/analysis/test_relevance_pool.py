"""Pooling and the relevance label cache: the first k distinct ids of an output, labels keyed by judge identity,
query text and passage text, appended and read back."""

from __future__ import annotations

import pytest

from ragassay.analysis.relevance_pool import LabelCache, PooledPair, label_key, top_passages
from ragassay.errors import ConfigError
from ragassay.models import RAGOutput


def test_top_passages_keeps_the_first_k_distinct_ids_in_rank_order():
    output = RAGOutput(answer="", contexts=["a", "b", "a2", "c", "d"], context_ids=["1", "2", "1", "3", "4"])
    assert top_passages(output, 3, "s", "q") == [("1", "a"), ("2", "b"), ("3", "c")]
    assert top_passages(RAGOutput(answer=""), 3, "s", "q") == [] and top_passages(None, 3, "s", "q") == []


def test_passages_without_ids_cannot_be_pooled():
    with pytest.raises(ConfigError, match="system 's', question 'q': the output has 2 contexts but 0 context ids"):
        top_passages(RAGOutput(answer="", contexts=["a", "b"]), 3, "s", "q")


def test_the_key_changes_with_judge_query_and_passage():
    keys = {
        label_key("j1", "q", "p"),
        label_key("j2", "q", "p"),
        label_key("j1", "q2", "p"),
        label_key("j1", "q", "p2"),
    }
    assert len(keys) == 4


def test_cached_labels_are_read_back_by_a_new_cache(tmp_path):
    pair, other = PooledPair("q1", "d1", "query", "passage"), PooledPair("q1", "d2", "query", "passage two")
    cache = LabelCache(tmp_path / "sub" / "labels.jsonl")
    cache.add("judge-a", [(pair, 3)])
    again = LabelCache(tmp_path / "sub" / "labels.jsonl")
    assert again.get("judge-a", pair) == 3
    assert again.get("judge-b", pair) is None and again.get("judge-a", other) is None
    same_text = PooledPair("q7", "d9", "query", "passage")  # another id, the same texts: the same label
    assert again.get("judge-a", same_text) == 3


def test_a_corrupt_cache_line_is_one_clear_error(tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"key": "x", "grade": 1}\nnot json\n')
    with pytest.raises(ConfigError, match="labels.jsonl, line 2: not a relevance label record"):
        LabelCache(tmp_path / "labels.jsonl")
