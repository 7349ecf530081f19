"""Run a coroutine so that Ctrl-C acts at once, whatever the coroutine's components are doing.

An event loop in the main thread only sees SIGINT between callbacks, so a component that builds an index or
imports torch synchronously delays Ctrl-C by seconds. Here the loop runs in a worker thread and the main thread
only waits: SIGINT raises :class:`KeyboardInterrupt` in the main thread at once, the run's task is cancelled
(its ``finally`` blocks store what is buffered), and after a short grace period the interrupt goes on up,
even if the worker is still inside native code.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

R = TypeVar("R")

#: Seconds an interrupted run gets to cancel and store its buffered results before the interrupt goes on.
GRACE_S = 0.5
INTERRUPTED_MESSAGE = "interrupted. Results stored so far are kept; re-run the same command to resume."


def run_interruptibly(make_coroutine: Callable[[], Awaitable[R]], *, grace_s: float = GRACE_S) -> R:
    """Run ``make_coroutine()`` on a new event loop in a worker thread and return its result.

    Exceptions of the coroutine are raised here. On Ctrl-C the coroutine's task is cancelled, given
    ``grace_s`` seconds to finish, and :class:`KeyboardInterrupt` is re-raised (the worker is a daemon thread).
    """
    outcome: dict[str, Any] = {}
    started = threading.Event()

    async def main() -> R:
        outcome["loop"], outcome["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await make_coroutine()

    def target() -> None:
        try:
            outcome["result"] = asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            outcome["error"] = exc
        finally:
            started.set()

    worker = threading.Thread(target=target, name="ragassay-run", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        _cancel(outcome, started, worker, grace_s)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _cancel(outcome: dict[str, Any], started: threading.Event, worker: threading.Thread, grace_s: float) -> None:
    started.wait(grace_s)
    loop, task = outcome.get("loop"), outcome.get("task")
    if loop is not None and task is not None:
        try:
            loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop already closed: nothing left to cancel
            pass
    worker.join(grace_s)


def exit_interrupted(code: int = 130) -> None:
    """Print the one-line interrupted message and end the process now, for the CLI after Ctrl-C.

    Stored results are committed and the run's lease is released by then. A normal interpreter exit would wait
    for threads still in a component's code (``asyncio.to_thread`` work is not a daemon) and then spend seconds
    tearing down modules such as torch, which is what made Ctrl-C feel ignored.
    """
    sys.stdout.flush()
    sys.stderr.write(f"error: {INTERRUPTED_MESSAGE}\n")
    sys.stderr.flush()
    os._exit(code)
