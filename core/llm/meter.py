"""Counting the model calls made on behalf of a piece of work (a metric, a judge), wherever they are made.

The runner opens a meter around each metric and judge call; every logical call through :class:`LLMClient`
(cache hits included) adds its usage to the innermost open meter of the current context. Tasks started inside
(``asyncio.gather``) share the meter, so a judge that fans out is counted whole. A system's own usage is
reported by the system in ``RAGOutput.usage`` and is not metered here.
"""

from __future__ import annotations

import contextlib
import contextvars
from typing import Iterator

from ..models import TokenUsage


class UsageMeter:
    """Usage added up while the meter is open."""

    def __init__(self) -> None:
        self.usage = TokenUsage()

    def add(self, usage: TokenUsage) -> None:
        self.usage = self.usage + usage


_current: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar("ragassay_usage_meter", default=None)


@contextlib.contextmanager
def metering() -> Iterator[UsageMeter]:
    """Open a meter for the calls made inside the ``with`` block (in this context and tasks it starts)."""
    meter = UsageMeter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


def record(usage: TokenUsage) -> None:
    """Add one logical call's usage to the open meter, if any."""
    meter = _current.get()
    if meter is not None:
        meter.add(usage)
