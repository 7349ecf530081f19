"""The watch's loop: look at the store, decide on the complete traces, wait ``[watch] poll_s`` when there were
none, until the stop rule says (``--until``, ``--for``, ``--traces``) or Ctrl-C."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable

from .session import WatchReport, WatchSession


@dataclasses.dataclass(frozen=True)
class StopRule:
    """When a session ends by itself: at ``until`` (seconds since the epoch), after ``seconds``, or once it decided
    on ``traces`` traces (scored, unscored, unmapped or left out); none of them: never (Ctrl-C)."""

    until: float | None = None
    seconds: float | None = None
    traces: int | None = None

    def reached(self, started: float, now: float, decided: int) -> bool:
        if self.traces is not None and decided >= self.traces:
            return True
        if self.seconds is not None and now - started >= self.seconds:
            return True
        return self.until is not None and now >= self.until

    def left(self, decided: int) -> int | None:
        return None if self.traces is None else self.traces - decided


async def run_session(
    session: WatchSession, stop: StopRule, on_open: Callable[[WatchReport], None] | None = None
) -> WatchReport:
    """Open the session, loop until the stop rule holds, return its report (also after Ctrl-C: what was
    committed stays, the batch in flight is not committed)."""
    report = await session.open()
    if on_open is not None:
        on_open(report)
    started = session.clock()
    try:
        while not stop.reached(started, session.clock(), report.count):
            left = stop.left(report.count)
            decided = await session.look(left if left is not None else session.rules.batch)
            if not decided:
                await asyncio.sleep(_pause(session, stop, started))
    except (KeyboardInterrupt, asyncio.CancelledError):
        session.say("stopping: the traces committed so far are kept; the batch in flight is scored again next time")
    return session.finish()


def _pause(session: WatchSession, stop: StopRule, started: float) -> float:
    """``poll_s``, cut short so that ``--until`` and ``--for`` are kept."""
    pause = session.rules.poll_s
    now = session.clock()
    ends = [t for t in (stop.until, None if stop.seconds is None else started + stop.seconds) if t is not None]
    return max(0.0, min([pause, *(end - now for end in ends)]))


def wall_clock() -> float:
    return time.time()
