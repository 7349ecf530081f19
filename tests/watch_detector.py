"""The change detection ``ragassay watch`` tests feed: :mod:`ragassay.analysis.monitor` when it is installed, else
:class:`WindowDetector`, a plain stand-in with the same interface (not a statistical procedure, and not what the
watch ships: a test of the watch's loop needs a detector on the far side of its protocol, not the statistics)."""

from __future__ import annotations

import dataclasses
from typing import Any

WINDOW = 6  # the stand-in alarms once the last WINDOW values all lie below reference - margin - GAP
GAP = 0.3


@dataclasses.dataclass
class Observation:
    value: float
    at: float
    trace_id: str
    attributes: dict[str, str]


@dataclasses.dataclass
class Alarm:
    metric: str
    direction: str
    change: float
    low: float
    high: float
    started_at: float
    fired_at: float
    observations: int
    worst_traces: list[str]
    versions: dict[str, dict[str, int]]
    alpha: float
    method: str


class WindowDetector:
    """Alarms once when the last :data:`WINDOW` values all fall :data:`GAP` below the reference (less the margin)."""

    def __init__(self, metric, reference, *, alpha=0.05, value_range=(0.0, 1.0), direction="higher", margin=0.0,
                 version_keys=("service.version",)):  # fmt: skip
        self.metric, self.reference, self.alpha, self.margin = metric, float(reference), alpha, margin
        self.direction, self.keys = direction, list(version_keys)
        self.recent: list[dict[str, Any]] = []
        self.seen = 0
        self.fired = False

    def observe(self, obs: Observation) -> Alarm | None:
        self.seen += 1
        self.recent = [*self.recent, dataclasses.asdict(obs)][-WINDOW:]
        low = self.reference - self.margin - GAP
        if self.fired or len(self.recent) < WINDOW or not all(o["value"] < low for o in self.recent):
            return None
        self.fired = True
        values = [o["value"] for o in self.recent]
        mean = sum(values) / len(values)
        versions: dict[str, dict[str, int]] = {}
        for o in self.recent:
            for key in self.keys:
                if key in o["attributes"]:
                    counts = versions.setdefault(key, {})
                    counts[o["attributes"][key]] = counts.get(o["attributes"][key], 0) + 1
        worst = [o["trace_id"] for o in sorted(self.recent, key=lambda o: (o["value"], o["trace_id"]))]
        change = mean - self.reference
        return Alarm(self.metric, "lower", change, min(values) - self.reference, max(values) - self.reference,
                     self.recent[0]["at"], obs.at, self.seen, worst, versions, self.alpha, "test window")  # fmt: skip

    def state(self) -> dict[str, Any]:
        return {"metric": self.metric, "reference": self.reference, "alpha": self.alpha, "margin": self.margin,
                "direction": self.direction, "keys": self.keys, "recent": self.recent, "seen": self.seen,
                "fired": self.fired}  # fmt: skip

    @classmethod
    def restore(cls, state: dict[str, Any]) -> WindowDetector:
        detector = cls(state["metric"], state["reference"], alpha=state["alpha"], direction=state["direction"],
                       margin=state["margin"], version_keys=state["keys"])  # fmt: skip
        detector.recent, detector.seen, detector.fired = state["recent"], state["seen"], state["fired"]
        return detector

    def restart(self, reference: float) -> None:
        self.reference, self.recent, self.fired = float(reference), [], False

    def summary(self) -> dict[str, Any]:
        return {"metric": self.metric, "reference": self.reference, "observations": self.seen, "fired": self.fired}


def reference_of(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def statistics():
    """The Statistics a watch is given: the real monitor's when it is installed, else the stand-in's."""
    from ragassay.watch import Statistics

    try:
        from ragassay.analysis import monitor
    except ImportError:
        return Statistics(WindowDetector, WindowDetector.restore, reference_of, Observation)
    return Statistics(monitor.Detector, monitor.Detector.restore, monitor.reference_of, monitor.Observation)
