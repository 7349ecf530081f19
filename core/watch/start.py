"""Starting a watch from a project: the plan, the store, the source (the OTLP receiver in this process, a folder,
or the store as another receiver fills it), the sinks, and the loop (:func:`watch`)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..config.watch import WatchSection
from ..engine.project import Project
from ..errors import StoreError
from .detect import Statistics
from .loop import StopRule, run_session
from .plan import WatchPlan
from .session import WatchReport, WatchSession
from .sinks import Sinks
from .source import FolderFeed


@dataclasses.dataclass(frozen=True)
class Source:
    """Where traces come from: ``receiver`` (a bound socket to serve OTLP/HTTP on), ``folder``, or neither: the
    store as it is filled (``--from-store``)."""

    sock: Any = None
    host: str = "127.0.0.1"
    max_bytes: int = 8 * 1024 * 1024
    folder: Path | None = None


def watch(
    project: Project,
    statistics: Statistics,
    *,
    rules: WatchSection | None = None,
    source: Source | None = None,
    stop: StopRule | None = None,
    say: Callable[[str], None] = print,
    on_open: Callable[[WatchReport], None] | None = None,
) -> WatchReport:
    """Run one watch session of ``project`` until ``stop`` (None: Ctrl-C) from ``source`` (None: the store as
    another receiver fills it); its report."""
    source, stop = source or Source(), stop or StopRule()
    plan = WatchPlan.of(project, rules)
    store = project.open_store(create=True)
    try:
        if not hasattr(store, "commit_watch") or not hasattr(store, "write_spans"):
            raise StoreError(
                f"this results store ({type(store).__name__}) keeps no watch: use a SQLite or PostgreSQL one"
            )
        sinks = Sinks(
            plan.rules.sinks,
            base_dir=project.base_dir,
            say=say,
            otlp=plan.rules.otlp,
            otlp_headers=plan.rules.otlp_headers,
        )
        folder = None if source.folder is None else FolderFeed(source.folder, warn=say)
        session = WatchSession(plan, store, statistics, sinks=sinks, say=say, folder=folder)
        with _receiving(store, source):
            return asyncio.run(run_session(session, stop, on_open))
    finally:
        store.close()


@contextlib.contextmanager
def _receiving(store: Any, source: Source) -> Iterator[None]:
    """The OTLP receiver on ``source.sock`` while the watch runs (nothing for the other sources)."""
    if source.sock is None:
        yield
        return
    from ..traces.receiver import Receiver

    with Receiver(store, host=source.host, max_bytes=source.max_bytes, sock=source.sock):
        yield
