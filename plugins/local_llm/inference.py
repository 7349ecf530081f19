"""What the model-based metrics share: the ``model_path`` option checked when the run is planned, length-sorted
batches, a bounded memo, and model work run off the event loop under the model's lock in inference mode.

Batches are planned from one unit's inputs only, never from whatever other units happen to be waiting: batch
composition then never depends on timing, so a stored value cannot change between runs by float rounding.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

from ragassay import ComponentContext, ConfigError, ProviderError, require

from .loader import LoadedModel, ModelSource, resolve_source

T = TypeVar("T")


def model_source(path: str | None, context: ComponentContext, who: str, hint: str = "") -> ModelSource:
    """The model named by a metric's ``model_path`` option (None: the packaged SmolLM2 GGUF).

    Raises :class:`ragassay.ConfigError` naming ``who`` and the option, with ``hint`` (how to get the model),
    when nothing loadable is there.
    """
    resolved = context.resolve(path) if path else None
    try:
        return resolve_source(resolved)
    except ProviderError as exc:
        reason = str(exc).removeprefix("local: ")
        raise ConfigError(f"{who}: option model_path = {path!r}: {reason}. {hint}".strip()) from None


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Indices of ``lengths`` sorted longest first (ties by index), cut into batches of ``batch_size``."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    size = max(1, batch_size)
    return [order[start : start + size] for start in range(0, len(order), size)]


class Memo:
    """A thread-safe least-recently-used memo of at most ``size`` entries.

    Callers key it by everything their computation reads, including how the inputs are batched, so that a hit
    returns exactly what a fresh computation would.
    """

    def __init__(self, size: int = 4096):
        self.size = size
        self._items: collections.OrderedDict[Hashable, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The stored value, or None."""
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: Hashable, value: Any) -> None:
        """Store ``value``, dropping the least recently used entry when full."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)


async def run_locked(loaded: Callable[[], LoadedModel], work: Callable[[LoadedModel], T]) -> T:
    """Run ``work(model)`` in a worker thread, holding the model's lock, inside ``torch.inference_mode()``.

    ``loaded`` returns the model (loading it on first use, in the worker thread too).
    """

    def job() -> T:
        torch = require("torch", "local", "running a local model")
        model = loaded()
        with model.lock, torch.inference_mode():
            return work(model)

    return await asyncio.to_thread(job)
