"""Token overlap of many (prediction, reference) pairs at once, exactly as :mod:`ragassay.lexical` computes it.

:func:`pair_overlaps` returns, for every pair, ``|p ∩ r|`` (the multiset intersection
``Σ_t min(count_p(t), count_r(t))``, Unitxt ``TokenOverlap._compute_single_ref``), ``|p|`` and ``|r|``;
:func:`overlap_scores` turns them into precision, recall and F1 with the float operations of
:func:`ragassay.lexical.overlap`, so the values are bit-identical to the per-text path. Tokens are those of
:func:`ragassay.text.answer_tokens`, computed by :func:`ragassay.unitxt.tokens_numpy.token_ids`.

How the intersection is counted without a Python loop:

1. Each token occurrence becomes the pair (token, rank), where rank counts the earlier occurrences of the same
   token in the same text, so a text becomes a *set* and ``|p ∩ r|`` of the multisets is the size of the
   intersection of the two sets: ``(t, 0..c_p-1)`` and ``(t, 0..c_r-1)`` share ``min(c_p, c_r)`` elements.
   The pairs get dense ids (``occurrence ids``); ranks come from sorting ``(text, token)`` keys block by block.
2. For a block of pairs, the occurrence ids of both sides are tagged with the pair's position in the block and
   sorted; an id present on both sides is two equal adjacent keys, and ``np.bincount`` of those per pair is
   ``|p ∩ r|``. Keys are ``uint32`` when the ids leave room for a block of at least 4,096 pairs.

Blocks (of texts, rows and pairs) run on two threads (:func:`ragassay.unitxt.tokens_numpy.in_threads`); results are
assembled in block order, so they never depend on timing. ``python benchmarks/lexical_batch_timing.py`` times
the whole path on benchmark-shaped data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from .tokens_numpy import TokenIds, in_threads, token_ids

_NARROW_BITS = 20  # ids of at most this many bits leave 12 bits of a uint32 key for the block position
_NARROW_BLOCK = 1 << 13  # at most this many rows or pairs per block: the block's arrays stay in cache
_WIDE_BLOCK = 1 << 13  # rows or pairs per block when keys are uint64


@dataclasses.dataclass(frozen=True)
class PairCounts:
    """Per pair ``k``: ``common[k] = |p ∩ r|``, ``pred_size[k] = |p|``, ``ref_size[k] = |r|`` (int64 arrays)."""

    common: np.ndarray
    pred_size: np.ndarray
    ref_size: np.ndarray


def pair_overlaps(texts: Sequence[str], pred: np.ndarray, ref: np.ndarray) -> PairCounts:
    """Token counts of the pairs ``(texts[pred[k]], texts[ref[k]])``.

    ``texts`` are the distinct texts of a batch (duplicates are allowed, only slower); ``pred`` and ``ref`` are
    equal-length integer arrays of indices into ``texts``. Deterministic and exact for any text.
    """
    pred_rows, ref_rows = _checked_rows(len(texts), pred, ref)
    tokens = token_ids(texts)
    pred_rows, ref_rows = tokens.rows[pred_rows], tokens.rows[ref_rows]
    sizes = np.diff(tokens.offsets)
    occurrences, occurrence_count = _occurrence_ids(tokens)
    common = _common_counts(occurrences, tokens.offsets, occurrence_count, pred_rows, ref_rows)
    return PairCounts(common, sizes[pred_rows], sizes[ref_rows])


def overlap_scores(counts: PairCounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(precision, recall, f1)`` per pair, all 0 where ``common == 0`` (:func:`ragassay.lexical.overlap`)."""
    scored = counts.common > 0
    same = counts.common[scored]
    precision, recall, f1 = (np.zeros(len(counts.common)) for _ in range(3))
    precision[scored] = same / counts.pred_size[scored]
    recall[scored] = same / counts.ref_size[scored]
    f1[scored] = 2 * precision[scored] * recall[scored] / (precision[scored] + recall[scored])
    return precision, recall, f1


def _checked_rows(text_count: int, pred: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pred, ref = np.asarray(pred), np.asarray(ref)
    for name, array in (("pred", pred), ("ref", ref)):
        if array.ndim != 1 or (array.size and array.dtype.kind not in "iu"):
            raise ValueError(f"pair_overlaps: {name} must be a 1-D array of integer text indices, got {array!r:.80}")
        if array.size and (array.min() < 0 or array.max() >= text_count):
            raise ValueError(f"pair_overlaps: {name} holds an index outside [0, {text_count}), the range of texts")
    if pred.shape != ref.shape:
        raise ValueError(f"pair_overlaps: pred and ref must have the same length, got {len(pred)} and {len(ref)}")
    return pred.astype(np.int64), ref.astype(np.int64)


# -- texts as sets of (token, rank) ---------------------------------------------------------------------------


def _occurrence_ids(tokens: TokenIds) -> tuple[np.ndarray, int]:
    """Per token occurrence, the dense id of (token, rank); and how many ids there are.

    Occurrences come out grouped by text (row order), each text's ids sorted. The id of (t, r) is
    ``start[t] + r``, where ``start`` leaves room for the highest rank token ``t`` reaches in any text.
    """
    token_bits = max(1, (tokens.id_count - 1).bit_length())
    dtype, block = _key_layout(token_bits)
    spans = _row_blocks(tokens.offsets, block)
    keys = _sorted_by_text(tokens, spans, token_bits, dtype)
    token_mask = dtype((1 << token_bits) - 1)
    highest = np.zeros(tokens.id_count, dtype=np.int64)
    for token, rank in in_threads(lambda span: _repeats(keys[span[0] : span[1]], token_mask), spans):
        np.maximum.at(highest, token, rank)
    ends = np.cumsum(highest + 1)
    count = int(ends[-1]) if len(ends) else 0
    start = (ends - highest - 1).astype(np.uint32 if count <= 2**32 else np.int64)
    ids = keys if start.dtype == keys.dtype else np.empty(len(keys), dtype=start.dtype)

    def number_block(span: tuple[int, int, int]) -> None:
        block_keys = keys[span[0] : span[1]]
        repeat = _repeated(block_keys)
        block_ids = start[block_keys & token_mask]
        block_ids[repeat] += _run_positions(repeat).astype(start.dtype)
        ids[span[0] : span[1]] = block_ids

    in_threads(number_block, spans)
    return ids, count


def _repeated(keys: np.ndarray) -> np.ndarray:
    """Positions in one block's sorted keys that repeat the previous key: occurrences of rank 1 and more."""
    return np.flatnonzero(keys[1:] == keys[:-1]) + 1


def _repeats(keys: np.ndarray, token_mask) -> tuple[np.ndarray, np.ndarray]:
    """The token and the rank of each repeated occurrence in one block's sorted keys."""
    repeat = _repeated(keys)
    return keys[repeat] & token_mask, _run_positions(repeat)


def _run_positions(positions: np.ndarray) -> np.ndarray:
    """For sorted ``positions``, each one's place (1, 2, ...) in its run of consecutive integers."""
    if not len(positions):
        return np.zeros(0, dtype=np.int64)
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    run_start = np.zeros(len(positions), dtype=np.int64)
    run_start[breaks] = breaks
    np.maximum.accumulate(run_start, out=run_start)
    return np.arange(1, len(positions) + 1) - run_start


def _row_blocks(offsets: np.ndarray, block: int) -> list[tuple[int, int, int]]:
    """``(begin, end, first_row)`` of each block of ``block`` rows: its token positions and its first row."""
    firsts = range(0, len(offsets) - 1, block)
    return [(int(offsets[row]), int(offsets[min(row + block, len(offsets) - 1)]), row) for row in firsts]


def _sorted_by_text(tokens: TokenIds, spans: list[tuple[int, int, int]], token_bits: int, dtype) -> np.ndarray:
    """Keys ``(row position in block) << token_bits | token`` of every occurrence, sorted within each text.

    The row position fits beside the token id because rows are cut into blocks; each block's keys are sorted
    on their own, so texts stay in row order. The keys overwrite ``tokens.ids`` when the widths agree (no
    fresh memory for the largest array; the caller no longer needs the ids).
    """
    same_width = tokens.ids.dtype.itemsize == np.dtype(dtype).itemsize
    keys = tokens.ids.view(dtype) if same_width else tokens.ids.astype(dtype)  # ids are >= 0: a view is exact
    sizes = np.diff(tokens.offsets)

    def sort_block(span: tuple[tuple[int, int, int], int]) -> None:
        (begin, end, first_row), next_first = span
        rows = np.arange(next_first - first_row, dtype=dtype) << dtype(token_bits)
        np.bitwise_or(np.repeat(rows, sizes[first_row:next_first]), keys[begin:end], out=keys[begin:end])
        keys[begin:end].sort()

    in_threads(sort_block, list(zip(spans, [*(span[2] for span in spans[1:]), len(sizes)])))
    return keys


def _key_layout(id_bits: int) -> tuple[type, int]:
    """Key dtype and block length for keys ``(position in block) << id_bits | id``."""
    if id_bits <= _NARROW_BITS:
        return np.uint32, min(1 << (32 - id_bits), _NARROW_BLOCK)
    if id_bits > 47:
        raise ValueError(f"token overlap: {id_bits}-bit ids do not fit a 64-bit key")
    return np.uint64, _WIDE_BLOCK


# -- intersections per pair -------------------------------------------------------------------------------------


def _common_counts(
    ids: np.ndarray, offsets: np.ndarray, id_count: int, pred_rows: np.ndarray, ref_rows: np.ndarray
) -> np.ndarray:
    """``|set(pred) ∩ set(ref)|`` per pair, where row ``i``'s set is ``ids[offsets[i]:offsets[i + 1]]``."""
    id_bits = max(1, (id_count - 1).bit_length())
    dtype, block = _key_layout(id_bits)
    narrow_ids = ids.astype(dtype, copy=False)
    position = np.tile(np.arange(block, dtype=dtype), 2)

    def count_block(first: int) -> np.ndarray:
        rows = np.concatenate([pred_rows[first : first + block], ref_rows[first : first + block]])
        pairs = len(rows) // 2
        tags = position if pairs == block else np.tile(np.arange(pairs, dtype=dtype), 2)
        keys = _tagged(narrow_ids, offsets, rows, tags, dtype(id_bits))
        keys.sort()
        shared = keys[1:][keys[1:] == keys[:-1]]
        return np.bincount((shared >> dtype(id_bits)).astype(np.intp), minlength=pairs)

    counts = in_threads(count_block, range(0, len(pred_rows), block))
    return np.concatenate(counts).astype(np.int64) if counts else np.zeros(0, dtype=np.int64)


def _tagged(ids: np.ndarray, offsets: np.ndarray, rows: np.ndarray, tags: np.ndarray, bits) -> np.ndarray:
    """The ids of each row in ``rows``, concatenated, with the row's tag in the high bits: ``tag << bits | id``."""
    starts, lengths = offsets[rows], offsets[rows + 1] - offsets[rows]
    ends = np.cumsum(lengths)
    gather = np.arange(ends[-1] if len(ends) else 0, dtype=np.int64) + np.repeat(starts - ends + lengths, lengths)
    return (np.repeat(tags, lengths) << bits) | ids[gather]
