"""Work the agents metrics share for one (sample, output): the hop matching (``hop_*`` and ``step_blame``) and the
tool calls compared (``tool_correctness``, ``argument_correctness``, ``trajectory_match``, ``step_efficiency``).

The runner scores a unit's metrics one after another on the same sample and output objects, so the first metric
computes and the others of the unit reuse its result. The memo is keyed by the identity of the sample and the
output (and the parameters that change the result). An entry keeps references to both objects and to what the
computation reads (the trajectory list and its steps, the output's context lists, the sample's hops and expected
calls); a lookup hits only when each of these is the very same object (``is``). So an id reused by another object,
or a list replaced on the output, never hits; a step changed in place is not seen (the runner changes none).

Bounded (:data:`MAX_ENTRIES`, the oldest dropped first) and thread-safe: a lock guards the table; a computation
runs outside it, so two threads may compute one entry once each, with equal results. A shared result is read
only: the metrics build their own details from it.
"""

from __future__ import annotations

import collections
import operator
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from ragassay import RAGOutput, Sample

T = TypeVar("T")

#: Entries kept: a unit's metrics run one after another, so a few per concurrent unit are enough.
MAX_ENTRIES = 64

_entries: collections.OrderedDict[Hashable, tuple[tuple[Any, ...], Any]] = collections.OrderedDict()
_lock = threading.Lock()


def watched(sample: Sample, output: RAGOutput) -> tuple[Any, ...]:
    """The objects a shared result depends on, compared by identity on lookup (module docstring)."""
    trajectory = output.trajectory
    return (
        sample,
        output,
        trajectory,
        *trajectory,
        output.context_ids,
        output.context_document_ids,
        output.contexts,
        output.retrieved,
        sample.hops,
        *sample.hops,
        sample.expected_tool_calls,
        *sample.expected_tool_calls,
    )


def _same(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    return len(kept) == len(now) and all(map(operator.is_, kept, now))


def shared(what: str, params: Hashable, sample: Sample, output: RAGOutput, compute: Callable[[], T]) -> T:
    """``compute()`` for (``what``, ``params``) on these very ``sample`` and ``output`` objects, computed once while
    the entry is kept (module docstring)."""
    key = (what, params, id(sample), id(output))
    now = watched(sample, output)
    with _lock:
        entry = _entries.get(key)
    if entry is not None and _same(entry[0], now):
        return entry[1]
    result = compute()
    with _lock:
        _entries[key] = (now, result)
        _entries.move_to_end(key)
        while len(_entries) > MAX_ENTRIES:
            _entries.popitem(last=False)
    return result


def clear() -> None:
    """Forget every shared result (tests; a long-lived process that wants the references dropped)."""
    with _lock:
        _entries.clear()
