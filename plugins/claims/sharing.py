"""One claim run per output, shared by every claim metric that asks for it with the same checking options.

The runner scores a unit's metrics one after another with one usage meter per metric. The first claim metric of
an output makes the calls (so they are counted once, on that metric, which also stores the claims and checks in
its details); the others of the same unit await the same result and make none. The shared table lives in the
run's :meth:`ComponentContext.shared` (this process only); an entry is dropped once every claim metric that
registered for its options took it, and the table keeps at most :data:`MAX_ENTRIES` entries besides (outputs whose
other claim metrics were not scored, e.g. reused from an earlier run).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

MAX_ENTRIES = 512


@dataclasses.dataclass
class _Entry:
    future: asyncio.Future
    owner: str
    taken: set[str] = dataclasses.field(default_factory=set)


class SharedRuns:
    """``key -> result`` computed once; see the module docstring."""

    def __init__(self) -> None:
        self.entries: collections.OrderedDict[Hashable, _Entry] = collections.OrderedDict()
        self.consumers: dict[Hashable, dict[str, frozenset[str]]] = collections.defaultdict(dict)

    def register(self, options_key: Hashable, metric: str, needs: frozenset[str]) -> None:
        """``metric`` will ask for the runs of ``options_key`` and read the check lists ``needs``."""
        self.consumers[options_key][metric] = needs

    def needs(self, options_key: Hashable) -> set[str]:
        """The check lists the metrics registered for ``options_key`` read together."""
        return set().union(*self.consumers.get(options_key, {}).values())

    async def get(
        self, options_key: Hashable, output_key: Hashable, metric: str, compute: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, str | None]:
        """(result, None) for the metric that computed it, (result, owner's name) for the others."""
        key = (options_key, output_key, id(asyncio.get_running_loop()))
        entry = self.entries.get(key)
        if entry is None or metric in entry.taken:  # a metric scored twice for an output computes afresh
            return await self._compute(key, options_key, metric, compute)
        entry.taken.add(metric)
        try:
            return await asyncio.shield(entry.future), entry.owner
        finally:
            self._release(key, options_key, entry)

    async def _compute(
        self, key: Hashable, options_key: Hashable, metric: str, compute: Callable[[], Awaitable[Any]]
    ) -> tuple[Any, None]:
        entry = _Entry(asyncio.get_running_loop().create_future(), metric, {metric})
        self.entries[key] = entry
        while len(self.entries) > MAX_ENTRIES:
            self.entries.popitem(last=False)
        try:
            result = await compute()
        except BaseException as exc:
            self.entries.pop(key, None)
            entry.future.set_exception(exc)
            entry.future.exception()  # retrieved: waiters re-raise it, nobody else is told it was lost
            raise
        entry.future.set_result(result)
        self._release(key, options_key, entry)
        return result, None

    def _release(self, key: Hashable, options_key: Hashable, entry: _Entry) -> None:
        if entry.future.done() and entry.taken >= set(self.consumers.get(options_key, {})):
            self.entries.pop(key, None)
