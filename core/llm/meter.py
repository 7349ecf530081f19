"""Counting the model calls made on behalf of a piece of work (a metric, a judge), wherever they are made.

The runner opens a meter around each metric and judge call; every logical call through :class:`LLMClient`
(cache hits included) adds its usage to the innermost open meter of the current context. Tasks started inside
(``asyncio.gather``) share the meter, so a judge that fans out is counted whole. A system's own usage is
reported by the system in ``RAGOutput.usage`` and is not metered here.
"""

from __future__ import annotations

import contextvars

from ..models import TokenUsage

_current: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar("ragassay_usage_meter", default=None)


class UsageMeter:
    """Usage added up while the meter is open (None until a call is recorded: most metrics call no model)."""

    __slots__ = ("usage", "_token")

    def __init__(self) -> None:
        self.usage: TokenUsage | None = None
        self._token: contextvars.Token | None = None

    def add(self, usage: TokenUsage) -> None:
        self.usage = usage if self.usage is None else self.usage + usage

    def __enter__(self) -> UsageMeter:
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)


def metering() -> UsageMeter:
    """A meter for the calls made inside a ``with metering() as meter:`` block (in this context and the tasks
    it starts)."""
    return UsageMeter()


def record(usage: TokenUsage) -> None:
    """Add one logical call's usage to the open meter, if any."""
    meter = _current.get()
    if meter is not None:
        meter.add(usage)
