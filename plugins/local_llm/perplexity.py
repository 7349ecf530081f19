"""Teacher-forced likelihood of a target text given a source text, batched: the core of the
``context_relevance_perplexity`` metric (:mod:`.relevance`) and of ``benchmarks/perplexity_pairs.py``.

For each (source, target) pair the score is ``exp(-(1/n) Σ_t CE_t)``: the geometric mean of the probabilities
the model gives each target token when every earlier target token is the true one (Unitxt ``Perplexity``).
Source and target are tokenised separately with the tokenizer's defaults (special tokens added, as Unitxt).

- Seq2seq models (``config.is_encoder_decoder``, e.g. flan-t5): the source is the encoder input, the target
  the labels; padding on the right is ignored.
- Causal LMs: one sequence ``source + target`` per pair with no padding inside it; the batch is padded on the
  left with a matching attention mask and position ids, and logit ``t`` predicts token ``t + 1``.

``n`` counts the target tokens that are predicted (padding never counts), so a pair's score does not depend
on the other pairs of its batch, up to float rounding.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
from collections.abc import Sequence
from typing import Any

from .inference import length_batches


@dataclasses.dataclass(frozen=True)
class PairScore:
    """The teacher-forced score of one (source, target) pair and what the model saw."""

    score: float  #: exp(-mean cross-entropy of the target tokens), in (0, 1]
    target_tokens: int  #: target tokens whose cross-entropy entered the mean
    source_tokens: int  #: source tokens the model saw (after truncation)
    truncated: bool  #: whether the source was cut to fit


def score_pairs(
    model: Any,
    tokenizer: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    batch_size: int = 8,
    *,
    max_source_tokens: int | None = None,
) -> list[float]:
    """The teacher-forced score of each (source, target) pair, in input order (see :func:`teacher_force`)."""
    return [p.score for p in teacher_force(model, tokenizer, sources, targets, batch_size, max_source_tokens)]


def teacher_force(
    model: Any,
    tokenizer: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    batch_size: int = 8,
    max_source_tokens: int | None = None,
) -> list[PairScore]:
    """:class:`PairScore` of each pair, in input order; pairs run longest first in batches of ``batch_size``.

    Sources longer than ``max_source_tokens`` (for a causal LM also: longer than its position limit leaves room
    for) are cut from the right. Call it inside ``torch.inference_mode()`` and not from two threads at once
    with the same tokenizer. Raises ValueError for a target with no tokens.
    """
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
    target_ids = tokenizer(list(targets))["input_ids"]
    if any(not ids for ids in target_ids):
        raise ValueError("a target has no tokens: nothing to teacher-force")
    causal = not getattr(model.config, "is_encoder_decoder", False)
    limits = [_source_limit(model, max_source_tokens, len(ids) if causal else 0) for ids in target_ids]
    source_ids, truncated = _encode_sources(tokenizer, sources, limits)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    losses: list[tuple[float, int]] = [(0.0, 0)] * len(sources)
    lengths = [len(s) + len(t) for s, t in zip(source_ids, target_ids)]
    for batch in length_batches(lengths, batch_size):
        pairs = [(source_ids[i], target_ids[i]) for i in batch]
        results = _causal_losses(model, pad, pairs) if causal else _seq2seq_losses(model, pad, pairs)
        for index, result in zip(batch, results):
            losses[index] = result
    if any(count == 0 for _, count in losses):
        raise ValueError("a pair has an empty source and a one-token target: no target token can be predicted")
    return [
        PairScore(math.exp(-total / count), count, len(src), cut)
        for (total, count), src, cut in zip(losses, source_ids, truncated)
    ]


def _source_limit(model: Any, max_source_tokens: int | None, target_length: int) -> int | None:
    """Most source tokens: the option, and for a causal LM what its position limit leaves beside the target."""
    positions = getattr(model.config, "max_position_embeddings", None) if target_length else None
    room = positions - target_length if positions else None
    if room is not None and room < 1:
        raise ValueError(f"the target has {target_length} tokens: no room for a source within {positions}")
    limits = [n for n in (max_source_tokens, room) if n is not None]
    return min(limits) if limits else None


def _encode_sources(
    tokenizer: Any, sources: Sequence[str], limits: Sequence[int | None]
) -> tuple[list[list[int]], list[bool]]:
    """Token ids of each source, cut to its limit by the tokenizer (special tokens kept), and which were cut."""
    ids = tokenizer(list(sources))["input_ids"]
    truncated = [limit is not None and len(row) > limit for row, limit in zip(ids, limits)]
    for index in (i for i, cut in enumerate(truncated) if cut):
        ids[index] = tokenizer(sources[index], truncation=True, max_length=limits[index])["input_ids"]
    return ids, truncated


def _causal_losses(model: Any, pad: int, pairs: list[tuple[list[int], list[int]]]) -> list[tuple[float, int]]:
    """(summed cross-entropy, token count) of each target after its source, left-padded into one batch."""
    import torch

    width = max(len(src) + len(tgt) for src, tgt in pairs)
    ids = torch.full((len(pairs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(pairs), width), dtype=torch.long)
    labels = torch.full((len(pairs), width), -100, dtype=torch.long)
    for row, (src, tgt) in enumerate(pairs):
        ids[row, width - len(src) - len(tgt) :] = torch.tensor(src + tgt)
        mask[row, width - len(src) - len(tgt) :] = 1
        labels[row, width - len(tgt) :] = torch.tensor(tgt)
        if not src:  # the first target token has no token before it to be predicted from
            labels[row, width - len(tgt)] = -100
    positions = (mask.cumsum(-1) - 1).clamp(min=0)
    kwargs = {}
    if _accepts(model, "logits_to_keep"):  # only the logits that predict target tokens
        kwargs["logits_to_keep"] = min(width, max(len(tgt) for _, tgt in pairs) + 1)
    logits = model(input_ids=ids, attention_mask=mask, position_ids=positions, **kwargs).logits
    offset = width - logits.shape[1]
    return _summed_cross_entropy(logits[:, :-1], labels[:, offset + 1 :])


def _seq2seq_losses(model: Any, pad: int, pairs: list[tuple[list[int], list[int]]]) -> list[tuple[float, int]]:
    """(summed cross-entropy, token count) of each target as the decoder's labels, right-padded."""
    import torch

    source_width = max(len(src) for src, _ in pairs)
    target_width = max(len(tgt) for _, tgt in pairs)
    ids = torch.full((len(pairs), source_width), pad, dtype=torch.long)
    mask = torch.zeros((len(pairs), source_width), dtype=torch.long)
    labels = torch.full((len(pairs), target_width), -100, dtype=torch.long)
    for row, (src, tgt) in enumerate(pairs):
        ids[row, : len(src)] = torch.tensor(src)
        mask[row, : len(src)] = 1
        labels[row, : len(tgt)] = torch.tensor(tgt)
    logits = model(input_ids=ids, attention_mask=mask, labels=labels).logits
    return _summed_cross_entropy(logits, labels)


def _summed_cross_entropy(logits: Any, labels: Any) -> list[tuple[float, int]]:
    """Per row: the cross-entropy summed over positions whose label is not -100 (float64), and their count."""
    import torch

    valid = labels != -100
    rows = valid.nonzero()[:, 0]
    losses = torch.nn.functional.cross_entropy(logits[valid].float(), labels[valid], reduction="none")
    sums = torch.zeros(labels.shape[0], dtype=torch.float64).index_add_(0, rows, losses.double())
    return [(float(total), int(count)) for total, count in zip(sums, valid.sum(dim=1))]


def _accepts(model: Any, argument: str) -> bool:
    try:
        return argument in inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - an unusual forward
        return False
