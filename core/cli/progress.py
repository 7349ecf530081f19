"""Progress of ``ragassay run``: a bar on a terminal, a plain line every few seconds otherwise (CI, logs, nohup)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable

import click

#: Seconds between plain progress lines when stderr is not a terminal (``--progress-every`` or this variable).
PROGRESS_EVERY_ENV = "RAGASSAY_PROGRESS_EVERY"
DEFAULT_PROGRESS_EVERY_S = 10.0


class PlainProgress:
    """Prints ``progress: 120/832 units, 3 failed, 12.3 units/s, elapsed 9.8s, eta 58s`` every ``every_s``."""

    def __init__(self, every_s: float, echo: Callable[[str], None] | None = None):
        self.every_s = every_s
        self.echo = echo or (lambda line: click.echo(line, err=True))
        self.total = self.done = self.failed = 0
        self._started = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, total: int) -> None:
        self.total, self._started = total, time.perf_counter()
        self._thread = threading.Thread(target=self._tick, name="ragassay-progress", daemon=True)
        self._thread.start()

    def advance(self, failed: bool) -> None:
        self.done += 1
        self.failed += failed

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def line(self) -> str:
        elapsed = time.perf_counter() - self._started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = f"{(self.total - self.done) / rate:.0f}s" if rate > 0 else "unknown"
        return (
            f"progress: {self.done}/{self.total} units, {self.failed} failed, {rate:.1f} units/s, "
            f"elapsed {elapsed:.1f}s, eta {eta}"
        )

    def _tick(self) -> None:
        while not self._stop.wait(self.every_s):
            self.echo(self.line())


class BarProgress:
    """A rich progress bar counting units (one system on one sample)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            transient=False,
        )
        self._task = None
        self.failed = 0

    def start(self, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task("units", total=total, failed=0)

    def advance(self, failed: bool) -> None:
        self.failed += failed
        self._progress.update(self._task, advance=1, failed=self.failed)

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


def run_callbacks(progress):
    """The ``on_start`` and ``on_result`` callbacks of a run that says what it starts (on stderr) and advances
    ``progress`` (a bar or periodic lines; None: quiet)."""
    import click

    def on_start(summary) -> None:
        verb = "resuming" if summary.resumed else "starting"
        click.echo(f"{verb} run {summary.run_id}: {summary.units} units ({summary.skipped} already done)", err=True)
        if progress is not None:
            progress.start(summary.units - summary.skipped)

    def on_result(result) -> None:
        if progress is not None:
            progress.advance(result.status == "failed")

    return on_start, on_result
