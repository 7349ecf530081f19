"""Key hygiene: keys come from the environment, and error messages never carry them."""

from __future__ import annotations

import pytest

from ragassay.errors import ProviderError
from ragassay.llm.keys import read_key, scrub


def test_read_key_reads_the_named_variable(monkeypatch):
    monkeypatch.setenv("MY_KEY_VAR", "sk-test-PLANTED-abcdef123456")
    assert read_key("MY_KEY_VAR", "openai") == "sk-test-PLANTED-abcdef123456"


def test_missing_key_names_the_variable_not_a_value(monkeypatch):
    monkeypatch.delenv("MY_MISSING_VAR", raising=False)
    with pytest.raises(ProviderError, match="MY_MISSING_VAR") as info:
        read_key("MY_MISSING_VAR", "openai")
    assert "api_key_env" in str(info.value)
    assert read_key("MY_MISSING_VAR", "openai", required=False) is None


def test_scrub_removes_known_keys_even_without_a_recognisable_shape(monkeypatch):
    monkeypatch.setenv("ODD_KEY", "zzODDsecretVALUE99")
    read_key("ODD_KEY", "x")
    assert "zzODDsecretVALUE99" not in scrub("server said: bad key zzODDsecretVALUE99 (401)")


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided: sk-proj-AbCdEf1234567890",
        "header Authorization: Bearer abcdefghijklmnop",
        '{"api_key": "qwertyuiop123456"}',
        "x-api-key=longsecretvalue42",
    ],
)
def test_scrub_removes_key_shapes(text):
    cleaned = scrub(text)
    assert "[redacted]" in cleaned
    for secret in ("AbCdEf1234567890", "abcdefghijklmnop", "qwertyuiop123456", "longsecretvalue42"):
        assert secret not in cleaned


def test_scrub_leaves_ordinary_text_alone():
    text = "openai gpt-4o-mini: HTTP 500: internal error; gave up after 3 attempts"
    assert scrub(text) == text


def test_a_known_short_key_does_not_leave_the_rest_of_a_longer_key():
    import os

    from ragassay.llm.keys import read_key, scrub

    os.environ["RAGASSAY_TEST_SHORT_KEY"] = "sk-test"
    try:
        read_key("RAGASSAY_TEST_SHORT_KEY", "t")
        assert "PLANTED" not in scrub("HTTP 401: bad key sk-test-PLANTED-0123456789")
    finally:
        del os.environ["RAGASSAY_TEST_SHORT_KEY"]
