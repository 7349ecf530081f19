"""The unperturbed retrieval of a wrapped system, computed once per question and shared by all its wrappers.

N perturbed systems wrapping one system ask for the same retrieval of every question; the first asks the wrapped
system, the others await the same task. An entry is dropped once every wrapper has taken it (memory stays bounded
by the questions in flight), and on failure (a retry computes it again).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ragassay import Retrieved, Sample


class SharedRetrieval:
    """Retrievals of one wrapped system in one process, by (question id, question)."""

    def __init__(self) -> None:
        self.users = 0  # wrappers sharing it (each registers once, in prepare)
        self.calls = 0  # retrievals actually computed
        self._entries: dict[tuple[str, str], list[Any]] = {}  # key -> [task, loop, takers]

    def register(self) -> None:
        """Count one more wrapper of this system."""
        self.users += 1

    async def get(self, sample: Sample, retrieve: Callable[[Sample], Awaitable[Retrieved]]) -> Retrieved:
        """The retrieval of ``sample``: computed by ``retrieve`` once, shared by every wrapper that asks."""
        key = (sample.question_id, sample.question)
        loop = asyncio.get_running_loop()
        entry = self._entries.get(key)
        if entry is None or entry[1] is not loop:  # a task belongs to the loop that made it
            self.calls += 1
            entry = [loop.create_task(retrieve(sample)), loop, 0]
            self._entries[key] = entry
        entry[2] += 1
        if entry[2] >= max(1, self.users):
            self._entries.pop(key, None)
        try:
            return await asyncio.shield(entry[0])
        except BaseException:
            if self._entries.get(key) is entry:
                self._entries.pop(key, None)
            raise
