"""Which repeat of a ``ragassay run --repeat N`` the current work belongs to (a context variable).

The runner scores repeat ``r`` of every model-calling metric and judge inside ``with repeating(r):``; every
request made through :class:`ragassay.llm.LLMClient` in that context (and the tasks it starts) carries
``repeat = r``, which is part of the response-cache key when it is not 0. So repeats are real, separate model
calls (at temperature 0 too), repeat 0 is exactly the call a run without repeats makes, and a re-run reproduces
each repeat from the cache. Judges need do nothing to take part.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

_current: contextvars.ContextVar[int] = contextvars.ContextVar("ragassay_repeat", default=0)


def current_repeat() -> int:
    """The repeat index of the current context (0 outside ``repeating``)."""
    return _current.get()


@contextlib.contextmanager
def repeating(index: int) -> Iterator[int]:
    """Make model calls inside the block belong to repeat ``index`` (0 = the run's first, uncounted one)."""
    if index < 0:
        raise ValueError(f"repeat index must be >= 0, got {index}")
    token = _current.set(index)
    try:
        yield index
    finally:
        _current.reset(token)
