"""Outputs packed with their contexts by key, and unpacked with the texts: the same output back."""

from __future__ import annotations

import base64
import hashlib
import json
import sys

import pytest

from ragassay.context_keys import keys_of, pack, repack, text_key, unpack
from ragassay.errors import StoreError
from ragassay.models import RAGOutput

OUTPUT = RAGOutput(
    answer="a",
    contexts=["same text", 'Zürich "quoted"', "same text"],
    context_ids=["d1#0", "d2#0", "d1#0"],
    context_document_ids=["d1", "d2", "d1"],
    trace={"scores": [3.0, 2.0, 1.0]},
)


def test_pack_names_each_context_by_its_key_and_collects_each_text_once():
    texts: dict[str, str] = {}
    raw = pack(OUTPUT, texts)
    assert "same text" not in raw and '"contexts"' not in raw
    assert keys_of(raw) == [text_key(c) for c in OUTPUT.contexts] and len(texts) == 2
    assert unpack(raw, texts) == OUTPUT
    digest = hashlib.sha256(b"same text").digest()[:24]
    assert len(text_key("same text")) == 32 and text_key("same text") != text_key("same text ")
    assert text_key("same text").encode() == base64.urlsafe_b64encode(digest)


def test_inline_json_reads_as_is_and_repacks_to_the_same_output():
    inline = OUTPUT.model_dump_json()
    assert keys_of(inline) == [] and unpack(inline, {}) == OUTPUT
    texts: dict[str, str] = {}
    packed = repack(inline, texts)
    assert unpack(packed, texts) == OUTPUT and json.loads(packed)["context_keys"] == keys_of(pack(OUTPUT, {}))
    assert repack(packed, {}) is None  # already packed: nothing to move
    assert repack(RAGOutput(answer="none").model_dump_json(), {}) is None


def test_a_key_without_its_text_is_a_damaged_store():
    raw = pack(OUTPUT, {})
    with pytest.raises(StoreError, match="does not hold"):
        unpack(raw, {})


def test_the_key_cache_holds_at_most_1_mib_whatever_the_number_of_texts():
    """A run of many distinct contexts (a 200,000-sample run) must not keep them all (issue 38, item 33): the
    cache is bounded by the memory its texts and keys take (1 MiB, docs/scale.md), not by a count."""
    from ragassay import context_keys

    bound = 1 << 20
    texts = [f"Item number {i} in the catalogue has value {i * 7 % 1000}. " * 20 for i in range(30_000)]  # ~40 MB
    for text in texts:
        assert text_key(text) == base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()[:24]).decode()
    held = sum(sys.getsizeof(text) + sys.getsizeof(key) for text, key in context_keys._keys.items())
    assert held <= bound
    assert 0 < len(context_keys._keys) < len(texts)  # it still caches: the texts seen last
    huge = "x" * (2 * bound)
    assert text_key(huge) == text_key(huge) and huge not in context_keys._keys  # hashed, never kept
