"""Data models and the shared text utilities."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragassay.errors import MissingDependencyError, require
from ragassay.models import RAGOutput, Sample, TokenUsage
from ragassay.text import answer_tokens, normalize_answer, sentences, terminal_safe, text_bytes, words


def test_squad_normalisation():
    assert normalize_answer("The  Cat, sat on A mat!") == "cat sat on mat"
    assert answer_tokens("An apple; the pear.") == ["apple", "pear"]


def test_words_fold_accents_and_drop_stopwords_on_request():
    assert words("Zürich and O'Brien") == ["zurich", "and", "o", "brien"]
    assert words("Who is the mayor of Zürich?", drop_stopwords=True) == ["mayor", "zurich"]


def test_sentences():
    assert sentences("First one. Second one! Third?\n\nFourth") == ["First one.", "Second one!", "Third?", "Fourth"]


def test_sample_keeps_free_attributes():
    sample = Sample(question_id="q", question="?", query_length="long", template="t3")
    assert sample.attributes == {"query_length": "long", "template": "t3"}
    assert Sample.model_validate_json(sample.model_dump_json()).attributes == sample.attributes


def test_output_lists_must_align():
    RAGOutput(answer="a", contexts=["x", "y"], context_ids=["1", "2"])
    RAGOutput(answer="a", context_ids=["1", "2"])
    with pytest.raises(ValidationError, match="same length"):
        RAGOutput(answer="a", contexts=["x"], context_ids=["1", "2"])


def test_token_usage_adds():
    total = TokenUsage(input_tokens=3, output_tokens=1, calls=1) + TokenUsage(input_tokens=2, cached_tokens=2, calls=1)
    assert total == TokenUsage(input_tokens=5, output_tokens=1, cached_tokens=2, calls=2)


def test_missing_optional_dependency_names_the_extra():
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragassay\[local\]'"):
        require("ragassay_no_such_module", "local", "local models")


def test_terminal_safe_shows_control_characters_as_escapes():
    assert terminal_safe("plain text, tab\tand\nnewline, ünïcödé") == "plain text, tab\tand\nnewline, ünïcödé"
    shown = terminal_safe("a\x1b[2Jb\x1b]0;pwned\x07c\x00\x7f\x9b31md\re\r\nf")
    assert shown == "a\\x1b[2Jb\\x1b]0;pwned\\x07c\\x00\\x7f\\x9b31md\\x0de\nf"
    assert not any(ord(ch) < 32 and ch not in "\n\t" or 0x7F <= ord(ch) <= 0x9F for ch in shown)


def test_text_bytes_counts_utf8_and_stops_past_the_limit():
    assert text_bytes(["ab", "é"], 100) == 4
    assert text_bytes(["x" * 50, "y" * 10**7, "z"], 100) == 50 + 10**7  # the huge one is not encoded; z not reached
