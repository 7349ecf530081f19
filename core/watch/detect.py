"""The change detection a watch feeds, behind a small protocol: the statistics live in
:mod:`ragassay.analysis.monitor` (anytime-valid, docs/watch.md), which the engine wing never imports, so the command
hands them in as :class:`Statistics`. :class:`Monitors` keeps one detector per watched column, restores them from the
watch's stored progress and says what they found as plain dicts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol


class Detector(Protocol):
    """One metric's sequential change detector (``ragassay.analysis.monitor.Detector``)."""

    def observe(self, obs: Any) -> Any | None:
        """Take one observation; an alarm when the change is shown, else None."""

    def state(self) -> dict[str, Any]:
        """Everything needed to go on after a restart (JSON)."""

    def restart(self, reference: float) -> None:
        """Start afresh against a new reference (the judge changed)."""

    def summary(self) -> dict[str, Any]:
        """What it has seen so far (JSON), for reports."""


@dataclasses.dataclass(frozen=True)
class Statistics:
    """The statistics a watch uses: ``detector(metric, reference, *, alpha, value_range, direction, margin,
    version_keys)``, ``restore(state)`` (a detector from its :meth:`Detector.state`), ``reference_of(values)`` (a
    reference from a stored run's values) and ``observation(value, at, trace_id, attributes)``."""

    detector: Callable[..., Detector]
    restore: Callable[[dict[str, Any]], Detector]
    reference_of: Callable[[Sequence[float]], float]
    observation: Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class Watched:
    """One watched column (a metric label, or ``judge:LABEL``) with what its detector must know."""

    column: str
    direction: str  # higher | lower: which way is better
    value_range: tuple[float, float]


class Monitors:
    """One detector per watched column, built against the references or restored from stored states."""

    def __init__(self, statistics: Statistics, watched: Sequence[Watched], *, alpha: float, margin: float, keys):
        self.statistics = statistics
        self.watched = {w.column: w for w in watched}
        self.alpha = alpha / max(1, len(watched))  # Bonferroni over the watched columns: any false alarm <= alpha
        self.margin = margin
        self.keys = tuple(keys)
        self.detectors: dict[str, Detector] = {}

    def start(self, references: Mapping[str, float], states: Mapping[str, dict[str, Any]]) -> None:
        """Restore the detectors of ``states``; build the others against ``references``."""
        for column, watched in self.watched.items():
            if column in states:
                self.detectors[column] = self.statistics.restore(states[column])
            elif column in references:
                self.detectors[column] = self.statistics.detector(
                    column,
                    float(references[column]),
                    alpha=self.alpha,
                    value_range=watched.value_range,
                    direction=watched.direction,
                    margin=self.margin,
                    version_keys=self.keys,
                )

    def observe(self, column: str, value: float, at: float, trace_id: str, attributes: dict[str, str]) -> Any | None:
        """Feed one value to its column's detector; the alarm it raised, or None."""
        detector = self.detectors.get(column)
        if detector is None:
            return None
        return detector.observe(self.statistics.observation(float(value), float(at), trace_id, dict(attributes)))

    def restart(self, column: str, reference: float) -> None:
        """The column's detector starts afresh against ``reference``."""
        if column in self.detectors:
            self.detectors[column].restart(float(reference))

    def states(self) -> dict[str, dict[str, Any]]:
        return {column: detector.state() for column, detector in self.detectors.items()}

    def summaries(self) -> dict[str, dict[str, Any]]:
        return {column: detector.summary() for column, detector in self.detectors.items()}
