"""The change detector on 1,000 seeded streams a scenario: false alarms without a change stay within alpha (plus
Monte Carlo slack), and the median detection delay after a drop of 2, 5 and 10 points is no worse than a daily
fixed-window test at the same alpha on the same streams (:mod:`ragassay.analysis.monitor_replay`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragassay.analysis.monitor import Detector, Observation
from ragassay.analysis.monitor_replay import draw_streams, simulate

ALPHA = 0.05
STREAMS = 1_000


def slack_bound(streams: int, alpha: float) -> float:
    """alpha x streams plus three binomial standard deviations."""
    return alpha * streams + 3 * math.sqrt(streams * alpha * (1 - alpha))


def test_no_change_streams_raise_a_false_alarm_in_at_most_alpha_of_them():
    run = simulate(0.0, streams=STREAMS, length=5_000, alpha=ALPHA, seed=1)
    assert run.false_alarms() <= slack_bound(STREAMS, ALPHA)


def test_a_stream_at_the_edge_of_the_margin_is_no_change():
    run = simulate(0.0, streams=300, length=5_000, alpha=0.2, margin=0.03, seed=2)
    assert run.false_alarms() <= slack_bound(300, 0.2)


@pytest.mark.parametrize("shift", [0.02, 0.05, 0.10])
def test_median_delay_is_no_worse_than_a_daily_fixed_window(shift):
    run = simulate(shift, streams=STREAMS, length=5_000, alpha=ALPHA, seed=3)
    detector, window = np.median(run.detector_delay), np.median(run.window_delay)
    assert detector <= window, (shift, detector, window)
    if shift >= 0.05:  # within the 2,000-plus traces after the change, most streams are caught
        assert math.isfinite(detector)
        assert np.isfinite(run.detector_delay).mean() > np.isfinite(run.window_delay).mean() - 0.02


def test_the_vectorised_steps_are_the_detectors_steps():
    """The simulation runs first_alarms on many rows; the Detector must alarm at exactly the same trace."""
    run = simulate(0.05, streams=6, length=3_000, alpha=ALPHA, seed=4)
    x, change_at = draw_streams(0.05, streams=6, length=3_000, mean=0.8, margin=0.0, seed=4)
    assert (change_at == run.change_at).all()
    for row in range(6):
        detector, fired = Detector("m", 0.8, alpha=ALPHA), -1
        for index, value in enumerate(x[row]):
            if detector.observe(Observation(float(value), float(index), f"t{index}", {})) is not None:
                fired = index
                break
        assert fired == run.detector_fired[row]
