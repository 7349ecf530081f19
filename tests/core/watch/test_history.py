"""The watch's history per time bin: counts and sums add up whatever the width, the snapshot of each bin is the
detector as the bin's last value left it, and the bins stay at most MAX_BINS however long the stream."""

from __future__ import annotations

import json

from ragassay.analysis.monitor import Detector, Observation
from ragassay.watch.history import MAX_BINS, WIDTHS_S, History, next_width


def _feed(history: History, detector: Detector, values: list[tuple[float, float]]) -> None:
    for at, value in values:
        history.observe("m", value, at, detector.summary)
        detector.observe(Observation(value, at, f"t{at}", {}))


def test_each_bin_counts_its_values_and_snapshots_the_detector_after_its_last_value():
    detector, history = Detector("m", 0.5), History()
    values = [(60.0 * minute + k, 1.0 if minute < 2 else 0.0) for minute in range(3) for k in range(5)]
    _feed(history, detector, values[:10])
    after_two_minutes = detector.summary()
    _feed(history, detector, values[10:])
    bins = history.state({"m": detector.summary})["columns"]["m"]
    assert [(b[0], b[1], b[2]) for b in bins] == [(0, 5, 5.0), (60, 5, 5.0), (120, 5, 0.0)]
    snapshot = dict(zip(("mean", "low", "high", "evidence", "reference", "n"), bins[1][3:]))
    assert snapshot["n"] == after_two_minutes["n"] == 10
    assert abs(snapshot["low"] - after_two_minutes["low"]) < 1e-5 and abs(snapshot["mean"] - 1.0) < 1e-9
    assert bins[2][8] == 15 and bins[2][3] < 1.0  # the last bin: the detector now
    assert bins[0][4] <= bins[1][4]  # the confidence sequence only narrows (running intersection)


def test_a_long_stream_is_merged_into_wider_bins_without_losing_a_value():
    detector, history = Detector("m", 0.5), History()
    minutes = 3 * MAX_BINS
    _feed(history, detector, [(60.0 * m, (m % 4) / 4) for m in range(minutes)])
    state = history.state({"m": detector.summary})
    bins = state["columns"]["m"]
    assert len(bins) <= MAX_BINS and state["width_s"] == next_width(WIDTHS_S[0])
    assert sum(b[1] for b in bins) == minutes
    assert abs(sum(b[2] for b in bins) - sum((m % 4) / 4 for m in range(minutes))) < 1e-9
    assert all(b[0] % state["width_s"] == 0 for b in bins)
    assert bins[-1][8] == minutes  # the last snapshot is the detector now


def test_the_state_round_trips_through_json_and_goes_on():
    detector, history = Detector("m", 0.5), History()
    _feed(history, detector, [(0.0, 1.0), (70.0, 0.0)])
    restored = History(json.loads(json.dumps(history.state({"m": detector.summary}))))
    _feed(restored, detector, [(75.0, 1.0), (130.0, 1.0)])
    bins = restored.state({"m": detector.summary})["columns"]["m"]
    assert [(b[0], b[1]) for b in bins] == [(0, 1), (60, 2), (120, 1)]
    assert bins[1][8] == 3 and bins[2][8] == 4


def test_a_value_before_the_last_bin_lands_in_its_own_bin():
    detector, history = Detector("m", 0.5), History()
    _feed(history, detector, [(0.0, 1.0), (200.0, 1.0), (65.0, 0.0)])
    bins = history.state({"m": detector.summary})["columns"]["m"]
    assert [(b[0], b[1], b[2]) for b in bins] == [(0, 1, 1.0), (60, 1, 0.0), (180, 1, 1.0)]
    assert all(b[8] is not None for b in bins)
