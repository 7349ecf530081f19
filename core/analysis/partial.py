"""What the verdicts of a run that is not complete stand on: ``partial: N of M samples, ...``.

A run processes its samples in ``[evaluation] order`` (:meth:`ragassay.engine.runner.Runner.samples`): by default the
seeded order (ascending sha256 of the seed and the question id, :func:`ragassay.sampling.order_key`), so a run
stopped early (Ctrl-C, a crash, a budget) has scored the first N samples of a random permutation: a uniform random
subset of size N (up to the few samples in flight when it stopped), and its means and verdicts are unbiased
estimates of the full run's. In file order the first N samples are whatever the file put first, which can differ
systematically from the rest (a dataset sorted by topic or difficulty), and the note says so.

:func:`partial_note` is what ``run`` (after Ctrl-C, a failure or a budget), ``compare``, ``report`` and ``serve``
print with the verdicts (:attr:`ragassay.analysis.verdicts.Verdicts.partial`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config.sequential import STOPPED_EARLY
from ..sampling import partial_text

DEFAULT_SEED = 42  # [evaluation] seed when the stored config does not name one
SEEDED_STATUSES = ("budget-limited", "settled")  # stored before [evaluation] order: these always ran seeded
#: a sequential run that stopped early says so itself (sequential_view); a failed one stored nothing to be partial
#: about
NOT_PARTIAL = ("complete", STOPPED_EARLY, "failed")


def stored_order_seed(config: Mapping[str, Any] | None, status: str) -> int | None:
    """The seed of the order a stored run was processed in (None: the file's order), from its stored config.

    A config stored before ``[evaluation] order`` existed ran seeded only with a budget or sequentially."""
    evaluation = (config or {}).get("evaluation") or {}
    order = evaluation.get("order")
    if order is None:
        seeded = status in SEEDED_STATUSES or bool(evaluation.get("budget")) or bool(evaluation.get("sequential"))
        order = "seeded" if seeded else "file"
    return int(evaluation.get("seed", DEFAULT_SEED)) if order == "seeded" else None


def samples_done(run: Any) -> int:
    """Samples of ``run`` (a :class:`ragassay.results.RunData`) processed by every system: each has a stored
    output, and each ok output a stored value (scored or unscored) of every metric and judge."""
    import numpy as np

    n, position, count = len(run.question_ids), run.position, len(run.outputs)
    index = np.fromiter((position.get(q, -1) for _, q in run.outputs), dtype=np.int64, count=count)
    ok = np.fromiter((output.ok for output in run.outputs.values()), dtype=bool, count=count)
    outputs = np.bincount(index[index >= 0], minlength=n)
    expected = np.bincount(index[(index >= 0) & ok], minlength=n) * len(run.columns)
    table = run.score_table
    rows = (table.repeat == 0) & (table.sample >= 0)
    keys = (table.sample[rows].astype(np.int64) * len(run.systems) + table.system[rows]) * max(
        len(table.columns), 1
    ) + table.column[rows]
    stored = np.bincount(np.unique(keys) // (len(run.systems) * max(len(table.columns), 1)), minlength=n)[:n]
    return int(np.count_nonzero((outputs >= len(run.systems)) & (stored >= expected)))


def partial_note(run: Any) -> str | None:
    """The partial note of ``run`` (a :class:`ragassay.results.RunData`): None for a complete run (or a sequential
    one that stopped early, which explains itself); else :func:`ragassay.sampling.partial_text` with the run's
    state, e.g. ``partial: 40 of 200 samples, a uniform random subset (seed 42); interrupted: run again to resume``."""
    info = run.info
    total = len(run.question_ids)
    done = samples_done(run)
    if info.state in NOT_PARTIAL or (done >= total and info.state == "interrupted"):
        return None
    text = partial_text(done, total, stored_order_seed(info.config, info.status))
    detail = f": {info.state_detail}" if info.state_detail else ""
    return f"{text}; {info.state}{detail}"
