"""Columns of the outputs themselves that a decision family can name beside the metrics: ``latency_s`` and
``tokens``.

* ``latency_s``: the seconds each output took (:func:`ragassay.analysis.latency.latency_column`);
* ``tokens``: the tokens each output spent, input + output of its stored usage (what the system reported, or
  ragassay's own agents counted); 0 for an output that called no model.

Both are lower-is-better and NaN (unscored) where the output failed or is missing (and, for ``latency_s``,
reports none). Listed in ``[evaluation] decide`` (or ``compare --decide``), each is decided by the one paired
procedure like a metric (:func:`ragassay.analysis.verdicts.decide`): the sign-flip test of the per-sample
differences and its inverted interval, Holm over the family, whole conversations flipped when samples are turns.
They have no declared range: the gate needs a ``[gate] margins`` entry for them in non-inferiority mode.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .latency import LATENCY, latency_column

TOKENS = "tokens"  # the per-sample input + output tokens, as a column of [evaluation] decide


def tokens_column(run, system: str) -> np.ndarray:
    """Per-sample tokens (input + output of the stored usage) of ``system`` in sample order, NaN where the output
    failed or is missing: the ``tokens`` column a declared decision family can name."""
    outputs = (run.output(system, q) for q in run.question_ids)
    return np.array(
        [o.usage.input_tokens + o.usage.output_tokens if o is not None and o.ok else np.nan for o in outputs],
        dtype=float,
    )


#: The output columns by name: each gives one system's per-sample values of a run (NaN: unscored).
OUTPUT_COLUMNS: dict[str, Callable] = {LATENCY: latency_column, TOKENS: tokens_column}


def output_columns(declared) -> list[str]:
    """The output columns a declared family names (in :data:`OUTPUT_COLUMNS` order); none for the default family."""
    return [name for name in OUTPUT_COLUMNS if declared and name in declared]
