"""How the ``ragassay`` command sets Python's cyclic garbage collector (the CLI only; the library leaves it alone).

A run loads about 250,000 long-lived objects: modules, classes and pydantic models of ragassay, SQLAlchemy and
the plugins, and at the first model call those of the LLM SDK. Python's full collections walk every one of them
and free almost nothing: in ``benchmarks/judges_run.py`` three of them took 30–110 ms each, two before the first
call and one inside the run window, where every call in flight waits for it (docs/llm.md, A whole run).

Only in the console script (:func:`ragassay.cli.main.main` calls :func:`use_in_this_process`): a run invoked
in-process (click's ``CliRunner``, a test) leaves the collector of its host process alone. The console script
undoes the freezing (:func:`gc.unfreeze`) before any ordinary interpreter exit, so that one finalizes
everything as usual (ragassay.cli.process_exit).

- :func:`loading` pauses the collector while the run's modules and plugins load, then moves everything alive
  into the permanent generation (:func:`gc.freeze`) and resumes it. Loading modules makes next to no garbage.
  The command's own modules load in one such block; each plugin the lazy plugin host imports later
  (:mod:`ragassay.plugin_index`), and each dependency :func:`ragassay.require` imports on first use (the LLM
  SDK at the first model call), loads in one of its own: without it, a full collection (35-45 ms) ran inside
  the SDK's import, before the first call.
- :func:`freezing_once` returns a callback that freezes once more at the run's first result, after the SDK
  that the first call imported. Cyclic garbage of that moment (the first units' objects still in flight) is
  then never collected, a one-time amount; everything made later is collected as usual.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator

_IN_THIS_PROCESS: list[bool] = []  # set by the console script


def use_in_this_process() -> None:
    """Let :func:`loading` and :func:`freezing_once` act (the console script's process only)."""
    _IN_THIS_PROCESS.append(True)


@contextlib.contextmanager
def loading() -> Iterator[None]:
    """Pause the collector in the block (unless it was already off), then freeze what is alive and resume it."""
    act = gc.isenabled() and bool(_IN_THIS_PROCESS)
    if act:
        gc.disable()
    try:
        yield
    finally:
        if act:
            gc.freeze()
            gc.enable()


def freezing_once(callback: Callable[..., None]) -> Callable[..., None]:
    """``callback``, which freezes the objects alive at its first call (see the module docstring) first."""
    pending = [True] if _IN_THIS_PROCESS else []

    def call(*args, **kwargs) -> None:
        if pending:
            pending.clear()
            gc.freeze()
        callback(*args, **kwargs)

    return call
