"""The vectorised token-overlap engine against the per-text Python path (ragassay.lexical)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ragassay.lexical import best_overlap, common_count, overlap, token_bag
from ragassay.text import answer_tokens
from ragassay.unitxt import tokens_numpy
from ragassay.unitxt.lexical_batch import PairCounts, overlap_scores, pair_overlaps

# Words that exercise every branch of the SQuAD normalisation and of the bulk path's exact keys.
VOCABULARY = (
    "a an the A An THE The tHe".split()
    + "hello there general kenobi dude cat Cat CAT 42 007 x y 3.14 don't U.S. e.g. self-made".split()
    + ["abcdefgh", "abcdefghi", "abcdefghij", "abcdefghijklmnop", "abcdefghijklmnopq"]  # 8, 9, 10, 16, 17 bytes
    + ["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrst", "x" * 41, "supercalifragilistic", "Supercalifragilistic!"]
    + ["!", "...", "?!", "(the)", "an,", "—the", "a-b", "_", "__a__"]
    + ["\t", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1f", "\x00", "\x7f", "\x01", "a\x00b", "the\x00"]
    + ["É", "é", "ß", "İ", "ı", "Straße", "café", "CAFÉ", "Ωmega", "αβγ", "the–end", "…", "“quoted”", "naïve"]
    + ["e\u0301", "a\u0301", "the\u0301", "\u212a", "ＡＢＣ", "日本語", "\u00a0", "x\u2028y", "ΟΔΟΣ", "Σ", "ΣΑ"]
)


PLAIN = [word for word in VOCABULARY if word.isascii() and word.isprintable() or word in "\t\n\r\n\x0b\x0c"]
SEPARATORS = [" ", " ", " ", "", "\t", "\n", "  ", ", ", "\x1c"]


def _random_texts(rng: np.random.Generator, count: int) -> list[str]:
    """Texts of 0-30 words; every other text only of plain words (the bulk path), the rest of any word."""
    texts = ["", " ", "the a an", "!!!", "\x00", "a\x1cthe"]
    while len(texts) < count:
        plain = len(texts) % 2 == 0
        words = rng.choice(PLAIN if plain else VOCABULARY, size=int(rng.integers(0, 30)))
        glue = rng.choice(SEPARATORS[:-1] if plain else SEPARATORS, size=len(words))
        texts.append("".join(word + sep for word, sep in zip(words, glue)))
    return texts


def _reference_counts(texts: list[str], pred: np.ndarray, ref: np.ndarray) -> tuple[list[int], ...]:
    bags = [token_bag(text) for text in texts]
    common = [common_count(bags[p], bags[r]) for p, r in zip(pred.tolist(), ref.tolist())]
    return common, [bags[p].size for p in pred.tolist()], [bags[r].size for r in ref.tolist()]


@pytest.fixture(params=["pandas", "numpy"])
def factorizer(request, monkeypatch):
    """Run a test with pandas' factorize when available, and with the numpy fallback."""
    if request.param == "pandas":
        pytest.importorskip("pandas")
    else:
        monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas then raises ImportError
    return request.param


def test_token_ids_equal_answer_tokens_for_every_text(factorizer):
    texts = _random_texts(np.random.default_rng(1), 3000)
    tokens = tokens_numpy.token_ids(texts)
    names: dict[int, str] = {}
    for i, text in enumerate(texts):
        expected = answer_tokens(text)
        ids = tokens.tokens_of(i).tolist()
        assert len(ids) == len(expected), text
        for token_id, token in zip(ids, expected):
            assert names.setdefault(token_id, token) == token, (text, token)
    assert len(set(names.values())) == len(names)  # one id per distinct token
    plain = np.array([_bulk_text(text) for text in texts])
    wordy = np.array([not text.isascii() for text in texts]) & plain
    assert plain.sum() > 1400 and wordy.sum() > 50
    assert (tokens.rows[plain] == np.arange(plain.sum())).all()  # the bulk path took them, in order


def _bulk_text(text: str) -> bool:
    """ASCII without a control character but the six ASCII spaces, or non-ASCII without a control character
    that is not whitespace to ``str.split`` (those are prepared to ASCII spaces)."""
    spaces = set("\t\n\x0b\x0c\r") if text.isascii() else set("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")
    return all(ch in spaces or not (ord(ch) < 0x20 or ch == "\x7f") for ch in text)


def test_pair_counts_equal_the_python_path(factorizer):
    rng = np.random.default_rng(2)
    texts = _random_texts(rng, 4000)
    pred, ref = rng.integers(0, len(texts), 20000), rng.integers(0, len(texts), 20000)
    pred[:50] = ref[:50]  # a text against itself
    counts = pair_overlaps(texts, pred, ref)
    common, pred_size, ref_size = _reference_counts(texts, pred, ref)
    assert counts.common.tolist() == common
    assert counts.pred_size.tolist() == pred_size
    assert counts.ref_size.tolist() == ref_size
    assert counts.common.dtype == counts.pred_size.dtype == counts.ref_size.dtype == np.int64


def test_repeated_tokens_count_as_multisets():
    texts = ["b b b c", "b b c c c d", "b", "", "x " * 300, "x " * 7 + "y"]
    counts = pair_overlaps(texts, np.array([0, 1, 0, 2, 3, 4, 5]), np.array([1, 0, 2, 0, 0, 5, 4]))
    assert counts.common.tolist() == [3, 3, 1, 1, 0, 7, 7]
    assert counts.pred_size.tolist() == [4, 6, 4, 1, 0, 300, 8]


def test_scores_are_bit_identical_to_overlap():
    rng = np.random.default_rng(3)
    texts = _random_texts(rng, 500)
    pred, ref = rng.integers(0, len(texts), 3000), rng.integers(0, len(texts), 3000)
    precision, recall, f1 = overlap_scores(pair_overlaps(texts, pred, ref))
    expected = [overlap(token_bag(texts[p]), token_bag(texts[r])) for p, r in zip(pred.tolist(), ref.tolist())]
    assert precision.tolist() == [score.precision for score in expected]
    assert recall.tolist() == [score.recall for score in expected]
    assert f1.tolist() == [score.f1 for score in expected]
    assert (f1 > 0).sum() > 1000  # the comparison covers real overlaps, not just zeros


def test_unitxt_published_token_overlap_case():
    texts = ["hello there general dude", "hello there general kenobi", "hello there!"]
    precision, recall, f1 = overlap_scores(pair_overlaps(texts, np.array([0, 0]), np.array([1, 2])))
    assert (precision.max(), recall.max(), f1.max()) == pytest.approx((0.75, 1.0, 0.75))
    assert tuple(best_overlap(texts[0], texts[1:])) == (precision.max(), recall.max(), f1.max())


def test_blocks_and_wide_keys_give_the_same_counts(monkeypatch):
    rng = np.random.default_rng(4)
    texts = _random_texts(rng, 1500)
    pred, ref = rng.integers(0, len(texts), 5000), rng.integers(0, len(texts), 5000)
    expected = _reference_counts(texts, pred, ref)[0]
    monkeypatch.setattr(tokens_numpy, "_BLOCK_BYTES", 64)  # many small text blocks
    monkeypatch.setattr("ragassay.unitxt.lexical_batch._NARROW_BITS", 0)  # uint64 keys ...
    monkeypatch.setattr("ragassay.unitxt.lexical_batch._WIDE_BLOCK", 7)  # ... in blocks of 7 rows and 7 pairs
    assert pair_overlaps(texts, pred, ref).common.tolist() == expected


def test_empty_batch_and_bad_indices():
    empty = pair_overlaps([], np.array([], dtype=np.int64), np.array([], dtype=np.int64))
    assert isinstance(empty, PairCounts) and [len(empty.common), len(empty.pred_size), len(empty.ref_size)] == [0] * 3
    assert pair_overlaps(["", ""], np.array([0]), np.array([1])).common.tolist() == [0]
    with pytest.raises(ValueError, match="outside"):
        pair_overlaps(["a b"], np.array([0]), np.array([1]))
    with pytest.raises(ValueError, match="same length"):
        pair_overlaps(["a b"], np.array([0, 0]), np.array([0]))
    with pytest.raises(ValueError, match="integer"):
        pair_overlaps(["a b"], np.array([0.0]), np.array([0]))


def test_same_counts_under_another_hash_seed(tmp_path):
    rng = np.random.default_rng(5)
    texts = _random_texts(rng, 600)
    pred, ref = rng.integers(0, len(texts), 900), rng.integers(0, len(texts), 900)
    (tmp_path / "batch.json").write_text(json.dumps({"texts": texts, "pred": pred.tolist(), "ref": ref.tolist()}))
    script = textwrap.dedent(
        """
        import json, sys
        import numpy as np
        from ragassay.unitxt.lexical_batch import pair_overlaps
        data = json.load(open(sys.argv[1]))
        counts = pair_overlaps(data["texts"], np.array(data["pred"]), np.array(data["ref"]))
        print(json.dumps([counts.common.tolist(), counts.pred_size.tolist(), counts.ref_size.tolist()]))
        """
    )
    outputs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path / "batch.json")], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    here = pair_overlaps(texts, pred, ref)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0]) == [here.common.tolist(), here.pred_size.tolist(), here.ref_size.tolist()]
    assert sum(json.loads(outputs[0])[0]) > 0


def test_key_layouts_leave_room_for_every_block_position():
    from ragassay.unitxt.lexical_batch import _key_layout

    for bits in range(1, 48):
        dtype, block = _key_layout(bits)
        assert (block - 1) << bits | ((1 << bits) - 1) <= np.iinfo(dtype).max, bits
