"""``ragassay watch``: standing rules over incoming traces (docs/watch.md). Each complete trace is scored as it
arrives through the ordinary unit processor and results store (one watch run per watch name, resumable after a
crash), within a judge budget per hour and per day, and each watched value is fed to a change detector whose
alarms go to stderr, a JSON-lines file, a webhook and OTLP.

    from ragassay.engine.project import Project
    from ragassay.watch import StopRule, watch

    report = watch(Project.load("."), statistics, stop=StopRule(traces=100))
"""

from __future__ import annotations

from .detect import Detector, Monitors, Statistics, Watched
from .loop import StopRule, run_session
from .plan import WatchPlan
from .session import WatchReport, WatchSession
from .start import Source, watch

__all__ = [
    "Detector",
    "Monitors",
    "Source",
    "Statistics",
    "StopRule",
    "WatchPlan",
    "WatchReport",
    "WatchSession",
    "Watched",
    "run_session",
    "watch",
]
