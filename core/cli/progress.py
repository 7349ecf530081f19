"""Progress of ``ragassay run``: a bar on a terminal, a plain line every few seconds otherwise (CI, logs, nohup)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

import click

from ..phases import PhaseProgress
from ..text import terminal_safe
from .phases_view import SHOW_AFTER_S, PhaseBoard

#: Seconds between plain progress lines when stderr is not a terminal (``--progress-every`` or this variable).
PROGRESS_EVERY_ENV = "RAGASSAY_PROGRESS_EVERY"
DEFAULT_PROGRESS_EVERY_S = 10.0


class SystemEta:
    """Time left, estimated per system: systems differ in cost by orders of magnitude (a keyword retriever and a
    dense one, a precomputed system and one calling a model), so a rate over all units mispredicts a run whose
    cheap systems finish first.

    Each result charges its system with the time since the previous result (the run's first result is charged
    nothing: its wait paid for building the systems too); a system's cost per unit is its charge over its charged
    results. The time left is the sum over systems of units left x cost per unit. Each system's units to do are
    ``units`` when given, else the run's ``total`` shared evenly between its ``systems`` (each system answers
    every sample: exact for a new run, an approximation for a resumed one). A system with units left and no
    charged result has no cost yet: the estimate is then a lower bound, and :meth:`text` says so. Without
    ``systems`` or ``units`` every unit is charged alike.
    """

    def __init__(
        self,
        total: int,
        systems: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        units: dict[str, int] | None = None,
    ):
        self.total, self.clock, self.units = total, clock, units
        self.systems = len(units) if units else systems
        self.done: dict[str, int] = {}
        self.charged: dict[str, tuple[int, float]] = {}  # system -> (results charged, seconds charged)
        self._last: float | None = None

    def record(self, system: str) -> None:
        """One more result of ``system``, now."""
        system = system if self.systems else ""
        now = self.clock()
        self.done[system] = self.done.get(system, 0) + 1
        if self._last is not None:
            count, seconds = self.charged.get(system, (0, 0.0))
            self.charged[system] = (count + 1, seconds + now - self._last)
        self._last = now

    def units_left(self) -> dict[str | None, float]:
        """Units left per system seen (or named in ``units``); None: those of the systems not seen yet."""
        if self.units is not None:
            return {name: max(count - self.done.get(name, 0), 0) for name, count in self.units.items()}
        names = max(self.systems or 1, len(self.done))
        share = self.total / names
        left: dict[str | None, float] = {name: max(share - done, 0.0) for name, done in self.done.items()}
        left[None] = share * (names - len(self.done))
        scale = (self.total - sum(self.done.values())) / (sum(left.values()) or 1.0)  # they add up to the run's
        return {name: units * scale for name, units in left.items()}

    def seconds_left(self) -> tuple[float | None, int]:
        """(seconds, systems with units left and no cost yet): seconds is None before any cost is known, and a
        lower bound while the second number is not 0."""
        if self.total - sum(self.done.values()) <= 0:
            return 0.0, 0
        if not self.charged:
            return None, 0
        left = self.units_left()
        known = sum(left.get(name, 0) * seconds / count for name, (count, seconds) in self.charged.items())
        untimed = sum(1 for name, units in left.items() if name is not None and units > 0 and name not in self.charged)
        if left.get(None, 0) > 0:
            untimed += (self.systems or 1) - len(self.done)
        since = self.clock() - self._last  # time already spent towards the next results
        return max(known - since, 0.0), untimed

    def text(self) -> str:
        """``58s``, ``>58s (2 of 4 systems not timed yet)``, or ``unknown`` (with why, when it is known)."""
        seconds, untimed = self.seconds_left()
        if seconds is None:
            return "unknown"
        if untimed:
            lower = f">{seconds:.0f}s" if seconds >= 1 else "unknown"
            return f"{lower} ({untimed} of {self.systems} systems not timed yet)"
        return f"{seconds:.0f}s"


class PlainProgress:
    """Prints ``progress: 120/832 units, 3 failed, 12.3 units/s, elapsed 9.8s, eta 58s`` every ``every_s``
    (the eta per system: :class:`SystemEta`). While systems are built it prints the build phases instead
    (:mod:`ragassay.cli.phases_view`): a line for a phase once it has lasted a second, every ``every_s`` after,
    and when it ends; warnings are printed when they are reported."""

    def __init__(
        self,
        every_s: float,
        echo: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.every_s = every_s
        self.echo = echo or (lambda line: click.echo(line, err=True))
        self.clock = clock
        self.total = self.done = self.failed = 0
        self.eta = SystemEta(0, clock=clock)
        self.board = PhaseBoard(clock)
        self._started = 0.0
        self._last_line = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, total: int, systems: int | None = None, units: dict[str, int] | None = None) -> None:
        """Count ``total`` units of ``systems`` (or exactly ``units`` per system, when known) from now."""
        self.total, self._started = total, self.clock()
        self._last_line = self._started
        self.eta = SystemEta(total, systems, self.clock, units)
        self._thread = threading.Thread(target=self._tick, name="ragassay-progress", daemon=True)
        self._thread.start()

    def advance(self, failed: bool, system: str = "") -> None:
        self.done += 1
        self.failed += failed
        self.eta.record(system)

    def phase(self, event: PhaseProgress) -> None:
        """A build phase reported by a component: its end line is printed now (when worth one)."""
        phase = self.board.update(event)
        if phase.ended and self.board.worth_an_end_line(phase):
            self.echo(terminal_safe(f"built: {phase.ended_line(self.clock())}"))

    def warning(self, message: str) -> None:
        """A warning reported while the run goes on (the summary at the end repeats it)."""
        self.echo(f"warning: {terminal_safe(message)}")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def line(self) -> str:
        elapsed = self.clock() - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        return (
            f"progress: {self.done}/{self.total} units, {self.failed} failed, {rate:.1f} units/s, "
            f"elapsed {elapsed:.1f}s, eta {self.eta.text()}"
        )

    def tick(self) -> None:
        """Print what is due now: the build phases while systems are built, else the units line."""
        now = self.clock()
        if self.board.building:
            line = self.board.due_line(self.every_s)
            if line is not None:
                self.echo(terminal_safe(f"building: {line}"))
            self._last_line = now
        elif now - self._last_line >= self.every_s:
            self.echo(self.line())
            self._last_line = now

    def _tick(self) -> None:
        while not self._stop.wait(min(self.every_s, SHOW_AFTER_S / 2)):
            self.tick()


class BarProgress:
    """A rich progress bar counting units (one system on one sample), with the eta per system (:class:`SystemEta`),
    and a row per build phase in progress (:mod:`ragassay.cli.phases_view`) while systems are built."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
        from rich.text import Text

        bar = self

        class InfoColumn(ProgressColumn):
            def render(self, task) -> Text:
                phase = task.fields.get("phase")
                if phase is None:
                    return Text(f"{task.fields.get('failed', 0)} failed", style="red")
                rate = phase.rate(bar.board.clock())
                return Text(f"{rate:,.1f} {phase.unit}/s" if rate is not None else phase.unit)

        class EtaColumn(ProgressColumn):
            def render(self, task) -> Text:
                phase = task.fields.get("phase")
                return Text(f"ETA {bar.eta.text() if phase is None else phase.eta(bar.board.clock())}")

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            InfoColumn(),
            TimeElapsedColumn(),
            EtaColumn(),
            transient=False,
        )
        self._task = None
        self._phase_tasks: dict[str, tuple] = {}
        self.failed = 0
        self.eta = SystemEta(0)
        self.board = PhaseBoard()

    def start(self, total: int, systems: int | None = None, units: dict[str, int] | None = None) -> None:
        """Count ``total`` units of ``systems`` (or exactly ``units`` per system, when known) from now."""
        self.eta = SystemEta(total, systems, units=units)
        self._progress.start()
        self._task = self._progress.add_task("units", total=total, failed=0)

    def advance(self, failed: bool, system: str = "") -> None:
        self.failed += failed
        self.eta.record(system)
        self._progress.update(self._task, advance=1, failed=self.failed)

    def phase(self, event: PhaseProgress) -> None:
        """A build phase: a bar row while it runs; a printed line when it ends (when worth one)."""
        from rich.markup import escape

        phase = self.board.update(event)
        for name in [n for n in self._phase_tasks if n not in self.board.active and n != event.phase]:
            self._progress.remove_task(self._phase_tasks.pop(name)[0])  # phases of a system built before
        task, shown = self._phase_tasks.pop(event.phase, (None, None))
        if task is not None and (phase.ended or shown is not phase):  # ended, or the phase started over
            self._progress.remove_task(task)
            task = None
        if phase.ended:
            if self.board.worth_an_end_line(phase):
                self._print(f"built: {phase.ended_line(self.board.clock())}")
            return
        if task is None:
            label = escape(terminal_safe(phase.label))
            task = self._progress.add_task(label, total=phase.total, completed=phase.done, phase=phase)
        else:
            self._progress.update(task, total=phase.total, completed=phase.done)
        self._phase_tasks[event.phase] = (task, phase)

    def warning(self, message: str) -> None:
        """A warning reported while the run goes on, printed above the bar (the summary repeats it)."""
        self._print(f"warning: {message}", style="yellow")

    def _print(self, text: str, style: str | None = None) -> None:
        from rich.text import Text

        self._progress.console.print(Text(terminal_safe(text), style=style or ""))

    def stop(self) -> None:
        self._progress.stop()


def progress_every(option: float | None) -> float:
    """The plain-line interval: the option, else the environment variable, else 10 s; must be positive."""
    raw = option if option is not None else os.environ.get(PROGRESS_EVERY_ENV, DEFAULT_PROGRESS_EVERY_S)
    try:
        every = float(raw)
    except ValueError:
        every = -1.0
    if not every > 0:
        from ..errors import ConfigError

        raise ConfigError(
            f"progress interval {raw!r} (--progress-every or {PROGRESS_EVERY_ENV}) is not a positive "
            f"number of seconds. Use e.g. --progress-every 10."
        )
    return every


def make_progress(quiet: bool, every_s: float) -> PlainProgress | BarProgress | None:
    """None with ``--quiet``; a bar when stderr is a terminal; plain lines every ``every_s`` otherwise."""
    if quiet:
        return None
    return BarProgress() if sys.stderr.isatty() else PlainProgress(every_s)


def system_count(loaded) -> int | None:
    """How many systems a loaded config declares, grids expanded (None when it cannot tell: the run will say why)."""
    from ..engine.systems import expand_systems
    from ..errors import RagassayError

    try:
        return len(expand_systems(loaded.config, loaded))
    except RagassayError:
        return None


def build_callbacks(progress) -> dict:
    """The ``on_progress`` and ``on_warning`` callbacks of :func:`ragassay.run` that show the build phases and the
    warnings as they are reported (none with ``--quiet``: the summary at the end lists the warnings)."""
    if progress is None:
        return {}
    return {"on_progress": progress.phase, "on_warning": progress.warning}


def run_callbacks(progress, systems: int | None = None):
    """The ``on_start`` and ``on_result`` callbacks of a run that says what it starts (on stderr) and advances
    ``progress`` (a bar or periodic lines; None: quiet); ``systems``: how many the run has (the eta is per system)."""
    import click

    def on_start(summary) -> None:
        verb = "resuming" if summary.resumed else "starting"
        click.echo(f"{verb} run {summary.run_id}: {summary.units} units ({summary.skipped} already done)", err=True)
        if progress is not None:
            progress.start(summary.units - summary.skipped, systems)

    def on_result(result) -> None:
        if progress is not None:
            progress.advance(result.status == "failed", result.system)

    return on_start, on_result
