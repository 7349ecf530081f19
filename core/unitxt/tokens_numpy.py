"""Token ids of many texts at once: :func:`ragassay.text.answer_tokens` for a whole batch, as numpy arrays.

:func:`token_ids` returns, for every text, the dense integer ids of its tokens (two texts share an id exactly
when they share the token), computed in bulk for *plain* texts and by :func:`answer_tokens` for the rest:

- A text is plain when it is ASCII and has no control character other than the ASCII whitespace
  ``\\t\\n\\v\\f\\r`` (the condition of ``_NOT_PLAIN`` in :mod:`ragassay.lexical`). After lower-casing and
  deleting ``string.punctuation`` such a text holds only ``[a-z0-9]`` and whitespace, so its tokens are the runs
  of ``[a-z0-9]`` and the article rule ``\\b(a|an|the)\\b`` drops exactly the tokens 'a', 'an' and 'the'.
- Any other text without a control character (NUL, ``\\x01``-``\\x08``, ``\\x0e``-``\\x1b``, DEL) is first
  *prepared* with the string operations of :func:`ragassay.text.normalize_answer` itself: lower-cased, ASCII
  punctuation deleted, the article regex applied (on the decoded string, so ``\\b`` has Python's Unicode
  meaning), and every whitespace character that ``str.split`` knows beyond ASCII's six (``\\x1c``-``\\x1f``,
  NBSP, ...) replaced by a space. What is left splits at ASCII whitespace only, so the byte rules apply, with
  every byte of 0x80 and above (UTF-8 of any other character) part of a token. When the text has no
  non-ASCII character other than word characters ('é', 'ß', 'ж'), articles can only be whole tokens, so the
  regex is skipped and the byte rules drop them. Only texts with a control character take the exact path.
- Plain texts are handled a block at a time (about 4 MB of text, so the work stays in cache; blocks run on
  two threads): joined with a separator, folded by one ``bytes.translate`` (lower case, punctuation deleted),
  and cut into tokens where the word-byte mask changes.
- Every token gets an exact key: a token of at most 8 bytes is its bytes packed little-endian into one
  ``uint64`` (tokens hold no NUL byte, so the packing is one-to-one); 9 to 16 bytes are two such words;
  longer tokens, and tokens with a NUL byte from the other path, are kept as Python strings. Keys are
  turned into dense ids with ``pandas.factorize`` when pandas is installed (its hash table compares whole
  keys), ``numpy.unique`` otherwise (several times slower). No hash value decides equality, so no collision
  can change a count.
"""

from __future__ import annotations

import dataclasses
import os
import re
import string
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np

from ..text import answer_tokens

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

_SEPARATOR = " \x00 "  # the NUL becomes a one-byte token of key 0 that marks where a text ends
_PADDING = " " * 8  # lets an 8-byte window start at any token of the block
_BLOCK_BYTES = 1 << 22
_WORKERS = min(2, os.cpu_count() or 1)  # threads tokenising blocks; more gains little (memory-bound)
_LOWER = bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
_PUNCTUATION = string.punctuation.encode()
_WORD_BYTES = (string.ascii_lowercase + string.digits).encode()
_PLAIN_BYTES = _WORD_BYTES + b"\x00\t\n\x0b\x0c\r " + bytes(range(0x80, 0x100))
# Control characters other than ASCII whitespace: a text holding one takes the answer_tokens path.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# Control characters that are neither whitespace nor word characters, NUL included: such a text takes the exact path.
_EXACT_ONLY = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]")
_OTHER_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")  # str.isspace
_ARTICLE_WORDS = re.compile(r"\b(?:a|an|the)\b")  # ragassay.text.normalize_answer's rule
# A non-ASCII character that is not a word character (a dash, a quote, a space, a combining mark), or one of
# the control characters str.split takes for spaces: only then can an article end inside a token or a space be
# missed by the byte rules, so only then do the regexes have to run.
_NON_ASCII_NON_WORD = re.compile(r"[^\x00-\x1b\x20-\x7f\w]")
_A, _AN, _THE = (int.from_bytes(article.encode(), "little") for article in ("a", "an", "the"))  # their keys
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_STRING_LENGTH = 255  # the length code of a token kept as a Python string


@dataclasses.dataclass(frozen=True)
class TokenIds:
    """Dense token ids of a batch of texts, stored by *row* (plain texts first).

    Text ``i`` is row ``rows[i]``; its token ids in text order are ``ids[offsets[row]:offsets[row + 1]]``.
    Ids lie in ``[0, id_count)``; equal ids mean equal tokens, and the reverse.
    """

    ids: np.ndarray
    offsets: np.ndarray
    rows: np.ndarray
    id_count: int

    def tokens_of(self, text_index: int) -> np.ndarray:
        """The token ids of input text ``text_index``."""
        row = self.rows[text_index]
        return self.ids[self.offsets[row] : self.offsets[row + 1]]


@dataclasses.dataclass
class _Keys:
    """Exact keys of a run of tokens (see the module docstring), and the token count of each text."""

    first: np.ndarray  # uint64 per token: its first 8 bytes (0 for a token kept as a string)
    length: np.ndarray  # uint8 per token: byte length, or _STRING_LENGTH for a token kept as a string
    second: np.ndarray  # uint64 per token of 9 to 16 bytes, in token order: its bytes 9-16
    strings: list[str]  # per token kept as a string, in token order
    sizes: np.ndarray  # int64 per text: its number of tokens


def token_ids(texts: Sequence[str]) -> TokenIds:
    """The tokens of every text as dense ids (see the module docstring); ``answer_tokens`` semantics exactly."""
    bulk, folded = _bulk_candidates(texts)
    blocks = _blocks(folded, np.flatnonzero(bulk))
    done = in_threads(lambda block: _plain_block([folded[i] for i in block.tolist()]), blocks)
    parts = [part for part, _ in done]
    plain_rows = [block[plain] for block, (_, plain) in zip(blocks, done)]
    other_rows = [np.flatnonzero(~bulk), *(block[~plain] for block, (_, plain) in zip(blocks, done))]
    other = np.sort(np.concatenate(other_rows))
    parts.append(_coded(_python_keys([texts[i] for i in other.tolist()])))
    ids, id_count = _dense_ids(parts)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.concatenate([part.sizes for part in parts]), out=offsets[1:])
    rows = np.empty(len(texts), dtype=np.int64)
    rows[np.concatenate([*plain_rows, other])] = np.arange(len(texts))
    return TokenIds(ids, offsets, rows, id_count)


def _bulk_candidates(texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """Which texts may take the bulk path, and the texts as it sees them (non-ASCII ones prepared)."""
    bulk = np.fromiter(map(str.isascii, texts), dtype=bool, count=len(texts))
    folded = list(texts)
    others = np.flatnonzero(~bulk).tolist()
    joined = "\x00".join(texts[i] for i in others)
    if _EXACT_ONLY.search(joined.replace("\x00", " ")) is None and joined.count("\x00") == max(len(others) - 1, 0):
        prepared = _prepared(joined).split("\x00")  # one pass over all of them; NUL separates and is no word
    else:  # some text has a control character: find which, text by text
        others = [i for i in others if _EXACT_ONLY.search(texts[i]) is None]
        prepared = [_prepared(texts[i]) for i in others]
    for index, text in zip(others, prepared):
        folded[index], bulk[index] = text, True
    return bulk, folded


def _prepared(text: str) -> str:
    """``normalize_answer`` up to its split: lower case, ASCII punctuation and articles gone, all spaces ASCII."""
    folded = text.lower().encode("utf-8").translate(None, _PUNCTUATION).decode("utf-8")
    if _NON_ASCII_NON_WORD.search(folded) is None:  # articles are whole tokens: the byte rules drop them
        return folded
    return _OTHER_SPACE.sub(" ", _ARTICLE_WORDS.sub(" ", folded))


def in_threads(function: Callable[[_Item], _Result], items: Sequence[_Item]) -> list[_Result]:
    """``[function(item) for item in items]``, run on up to two threads (numpy and pandas release the GIL).

    The results come back in the order of ``items``, so the outcome never depends on the timing.
    """
    if _WORKERS < 2 or len(items) < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        return list(pool.map(function, items))


def _plain_block(texts: list[str]) -> tuple[_Coded, np.ndarray]:
    """The coded tokens of the plain texts of one block, and which texts were plain."""
    keys, plain = _plain_keys(texts)
    return _coded(keys), plain


def _blocks(texts: Sequence[str], indices: np.ndarray) -> list[np.ndarray]:
    """``indices`` cut into consecutive blocks of about ``_BLOCK_BYTES`` characters of text."""
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))[indices]
    cuts = np.searchsorted(np.cumsum(lengths), np.arange(_BLOCK_BYTES, lengths.sum(), _BLOCK_BYTES))
    return [block for block in np.split(indices, cuts) if len(block)]


# -- the bulk path ----------------------------------------------------------------------------------------------


def _plain_keys(texts: list[str]) -> tuple[_Keys, np.ndarray]:
    """Keys of the plain texts among ``texts`` (ASCII, or prepared non-ASCII ones), and which texts were plain."""
    folded = _SEPARATOR.join(["", *texts, _PADDING]).encode("utf-8").translate(_LOWER, _PUNCTUATION)
    if folded.count(0) != len(texts) + 1 or folded.translate(None, _PLAIN_BYTES):  # a NUL or control character
        plain = np.array([_CONTROL.search(text) is None for text in texts], dtype=bool)
        if plain.all():
            raise RuntimeError("tokens_numpy: a block failed the plain check, yet no text has a control character")
        keys, _ = _plain_keys([text for text, ok in zip(texts, plain) if ok])
        return keys, plain
    starts, lengths = _token_spans(folded)
    windows = np.ndarray((len(folded) - 7,), dtype="<u8", buffer=folded, strides=(1,))
    first = windows[starts] & _LOW_BYTES[np.minimum(lengths, 8)]
    separator = first == 0  # keys are exact, so only 'a', 'an' and 'the' themselves equal these
    kept = ~(separator | (first == _A) | (first == _AN) | (first == _THE))
    sizes = np.add.reduceat(kept, np.flatnonzero(separator)[:-1]).astype(np.int64)
    longer = np.flatnonzero(lengths > 8)  # never dropped, so these tokens keep their order
    middle, long = longer[lengths[longer] <= 16], longer[lengths[longer] > 16]
    second = windows[starts[middle] + 8] & _LOW_BYTES[lengths[middle] - 8]
    strings = [folded[start : start + length].decode("utf-8") for start, length in zip(starts[long], lengths[long])]
    first[long] = 0
    length_codes = np.minimum(lengths, _STRING_LENGTH).astype(np.uint8)
    length_codes[long] = _STRING_LENGTH
    return _Keys(first[kept], length_codes[kept], second, strings, sizes), np.ones(len(texts), dtype=bool)


def _token_spans(folded: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Start and length of every run of word bytes (``[a-z0-9]``, 0x80 and above, or NUL) in folded plain text."""
    word = np.frombuffer(folded, dtype=np.uint8) - np.uint8(1) >= 0x20  # NUL wraps to 255; whitespace < 0x20
    edges = np.flatnonzero(word[1:] != word[:-1]).reshape(-1, 2) + 1
    starts = np.ascontiguousarray(edges[:, 0])
    return starts, edges[:, 1] - starts


# -- the exact path -------------------------------------------------------------------------------------------


def _python_keys(texts: list[str]) -> _Keys:
    """Keys of ``texts`` tokenised by :func:`answer_tokens` (any text; used for the non-plain ones)."""
    first: list[int] = []
    length: list[int] = []
    second: list[int] = []
    strings: list[str] = []
    sizes = np.zeros(len(texts), dtype=np.int64)
    for row, text in enumerate(texts):
        tokens = answer_tokens(text)
        sizes[row] = len(tokens)
        for token in tokens:
            data = token.encode("utf-8")
            if len(data) > 16 or 0 in data:
                first.append(0)
                length.append(_STRING_LENGTH)
                strings.append(token)
                continue
            first.append(int.from_bytes(data[:8], "little"))
            length.append(len(data))
            if len(data) > 8:
                second.append(int.from_bytes(data[8:], "little"))
    return _Keys(
        np.array(first, dtype=np.uint64),
        np.array(length, dtype=np.uint8),
        np.array(second, dtype=np.uint64),
        strings,
        sizes,
    )


@dataclasses.dataclass
class _Coded:
    """A block's tokens as codes into the block's table of distinct first words, and what tells longer ones apart."""

    codes: np.ndarray  # per token: index into firsts
    firsts: np.ndarray  # uint64: the block's distinct first words
    middle: np.ndarray  # positions of the tokens of 9 to 16 bytes
    second: np.ndarray  # their bytes 9-16, one per position in middle
    long: np.ndarray  # positions of the tokens kept as strings
    strings: list[str]  # those tokens, one per position in long
    sizes: np.ndarray  # int64 per text: its number of tokens


def _coded(keys: _Keys) -> _Coded:
    codes, firsts = _factorize(keys.first)
    middle = np.flatnonzero((keys.length > 8) & (keys.length <= 16))
    long = np.flatnonzero(keys.length == _STRING_LENGTH)
    return _Coded(codes, firsts, middle, keys.second, long, keys.strings, keys.sizes)


# -- from exact keys to dense ids -------------------------------------------------------------------------------


def _dense_ids(parts: list[_Coded]) -> tuple[np.ndarray, int]:
    """Dense ids: tokens of at most 8 bytes by their word, 9-16 bytes by their pair of words, longer by string."""
    first_ids, first_words = _factorize(np.concatenate([part.firsts for part in parts]))
    first_count = len(first_words)
    total = sum(len(part.codes) for part in parts)
    ids = np.empty(total, dtype=np.int32 if total < 2**31 else np.int64)
    token_bases = np.cumsum([0] + [len(part.codes) for part in parts])
    table_bases = np.cumsum([0] + [len(part.firsts) for part in parts])

    def number_part(index: int) -> None:
        table = first_ids[table_bases[index] : table_bases[index + 1]]
        ids[token_bases[index] : token_bases[index + 1]] = table[parts[index].codes]

    in_threads(number_part, range(len(parts)))
    middle = [part.middle + base for part, base in zip(parts, token_bases)]
    long = [part.long + base for part, base in zip(parts, token_bases)]
    middle_count = _number_middle(ids, np.concatenate(middle), [part.second for part in parts], first_count)
    strings = [token for part in parts for token in part.strings]
    long_count = _number_long(ids, np.concatenate(long), strings, first_count + middle_count)
    return ids, first_count + middle_count + long_count


def _number_middle(ids: np.ndarray, positions: np.ndarray, seconds: list[np.ndarray], base: int) -> int:
    """Give the 9-16 byte tokens at ``positions`` ids from ``base`` on, by (first word id, second word)."""
    if not len(positions):
        return 0
    second_ids, second_words = _factorize(np.concatenate(seconds))
    pair_ids, pairs = _factorize(ids[positions].astype(np.int64) * len(second_words) + second_ids)
    ids[positions] = base + pair_ids
    return len(pairs)


def _number_long(ids: np.ndarray, positions: np.ndarray, strings: list[str], base: int) -> int:
    """Give the tokens kept as strings (at ``positions``) ids from ``base`` on, equal strings equal ids."""
    if not len(positions):
        return 0
    numbering: dict[str, int] = {}
    ids[positions] = base + np.array([numbering.setdefault(token, len(numbering)) for token in strings])
    return len(numbering)


def _factorize(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(codes, uniques)`` with ``values == uniques[codes]``; pandas' hash table when installed, else a sort."""
    try:
        import pandas
    except ImportError:
        uniques, codes = np.unique(values, return_inverse=True)
        return codes.reshape(-1), uniques
    codes, uniques = pandas.factorize(values.view(np.int64) if values.dtype == np.uint64 else values)
    return codes, uniques
