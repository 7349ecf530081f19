"""What ``ragassay run`` shows while it builds its systems: the phases components report (chunking, indexing,
corpus embedding, cache hits) with counts, rate and time left.

:class:`PhaseBoard` keeps the state of the phases reported so far (:class:`ragassay.PhaseProgress` events) and
formats them; :mod:`ragassay.cli.progress` prints them: as plain lines without a terminal (a phase that lasts
``SHOW_AFTER_S`` or more gets a line then, every interval after, and one when it ends), as bar rows on one.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

from ..phases import PhaseProgress

#: A phase is shown once it has lasted this long (quick phases of small runs print nothing).
SHOW_AFTER_S = 1.0
#: The phase the runner reports per system built; its note names the system being built.
SYSTEMS_PHASE = "building systems"


@dataclasses.dataclass
class Phase:
    """One reported phase: counts, when it started and when a line about it was last shown."""

    name: str
    system: str | None
    unit: str
    total: int | None
    done: int
    started: float
    first_done: int
    note: str = ""
    shown_at: float | None = None
    ended: bool = False

    @property
    def label(self) -> str:
        """``dense: corpus embedding`` (the system being built, when known, then the phase)."""
        return f"{self.system}: {self.name}" if self.system and self.name != SYSTEMS_PHASE else self.name

    def rate(self, now: float) -> float | None:
        """Units per second since the phase started (None before any time or progress)."""
        elapsed = now - self.started
        return (self.done - self.first_done) / elapsed if elapsed > 0 and self.done > self.first_done else None

    def eta(self, now: float) -> str:
        """Seconds left at the current rate, or ``unknown``."""
        rate = self.rate(now)
        if self.total is None or rate is None:
            return "unknown"
        return f"{max(self.total - self.done, 0) / rate:.0f}s"

    def counts(self) -> str:
        return f"{self.done:,}/{self.total:,}" if self.total is not None else f"{self.done:,}"

    def line(self, now: float, *, with_system: bool = True) -> str:
        """``dense: corpus embedding 1,024/5,183 chunks, 85.2 chunks/s, elapsed 12.0s, eta 49s``; a phase of one
        unit (loading a model) has no count or rate: ``dense: embedding model load, elapsed 3.0s``."""
        rate = self.rate(now)
        speed = f", {rate:,.1f} {self.unit}/s" if rate is not None else ""
        label = self.label if with_system else self.name
        if self.total == 1:
            return f"{label}, elapsed {now - self.started:.1f}s"
        return f"{label} {self.counts()} {self.unit}{speed}, elapsed {now - self.started:.1f}s, eta {self.eta(now)}"

    def ended_line(self, now: float) -> str:
        """``dense: corpus embedding: 5,183 chunks in 61.0s (85.0 chunks/s)``, or ``...: 5,183 chunks (cache hit)``."""
        if self.note:
            return f"{self.label}: {self.done:,} {self.unit} ({self.note})"
        if self.total == 1:
            return f"{self.label}: done in {now - self.started:.1f}s"
        rate = self.rate(now)
        speed = f" ({rate:,.1f} {self.unit}/s)" if rate is not None else ""
        return f"{self.label}: {self.done:,} {self.unit} in {now - self.started:.1f}s{speed}"


class PhaseBoard:
    """The phases in progress, updated from :class:`PhaseProgress` events (from any thread)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.active: dict[str, Phase] = {}
        self.system: str | None = None
        self.lock = threading.Lock()

    def update(self, event: PhaseProgress) -> Phase:
        """Record ``event``; returns its phase (``ended`` when the event ends it: it is no longer active)."""
        now = self.clock()
        with self.lock:
            if event.phase == SYSTEMS_PHASE:
                self.system = event.note or None
                # the previous system's phases are over (a failed build leaves no end report)
                self.active = {n: p for n, p in self.active.items() if n == SYSTEMS_PHASE}
            phase = self.active.get(event.phase)
            if phase is None or event.done < phase.done:
                phase = Phase(event.phase, self.system, event.unit, event.total, event.done, now, event.done)
                self.active[event.phase] = phase
            phase.done, phase.total, phase.note = event.done, event.total, event.note
            if event.finished:
                phase.ended = True
                del self.active[event.phase]
                if event.phase == SYSTEMS_PHASE:
                    self.system, self.active = None, {}
            return phase

    def worth_an_end_line(self, phase: Phase) -> bool:
        """An ended phase gets a line when one was shown for it, it has a note, or it took ``SHOW_AFTER_S``."""
        return phase.shown_at is not None or bool(phase.note) or self.clock() - phase.started >= SHOW_AFTER_S

    def due_line(self, every_s: float) -> str | None:
        """The line to print now, or None: the innermost phase in progress (the one started last), once it has
        lasted ``SHOW_AFTER_S``, at most every ``every_s`` (sooner when another phase is shown), prefixed with the
        system being built: ``dense (2/3): corpus embedding 128/820 chunks, 4.1 chunks/s, elapsed 31.6s, eta 171s``.
        """
        now = self.clock()
        with self.lock:
            if not self.active:
                return None
            phase = list(self.active.values())[-1]
            last = max((p.shown_at for p in self.active.values() if p.shown_at is not None), default=None)
            if now - phase.started < SHOW_AFTER_S:
                return None
            if phase.shown_at is not None and now - phase.shown_at < every_s:
                return None
            if phase.shown_at is None and last is not None and now - last < SHOW_AFTER_S:
                return None
            phase.shown_at = now
            systems = self.active.get(SYSTEMS_PHASE)
            where = f"{self.system} ({systems.done + 1}/{systems.total})" if systems and self.system else ""
            if phase is systems:
                return f"{where or phase.name}, elapsed {now - phase.started:.1f}s"
            text = phase.line(now, with_system=False)
            return f"{where}: {text}" if where else text

    @property
    def building(self) -> bool:
        """Whether a phase is in progress."""
        return bool(self.active)
