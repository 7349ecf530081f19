"""The change detector one trace at a time: alarms, their fields, resuming from a saved state, restarting,
bounded memory and bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ragassay.analysis.monitor import (
    BETTER,
    WORSE,
    Detector,
    Observation,
    reference_of,
    reference_uncertainty,
)
from ragassay.analysis.monitor_track import MAX_VALUES, OTHER
from ragassay.errors import ConfigError, DatasetError

START = 1_700_000_000.0  # epoch seconds of the first trace; one trace a minute


def stream(n: int, change_at: int, before: float, after: float, seed: int, continuous: bool = False) -> list:
    """Observations with a mean ``before`` up to ``change_at`` and ``after`` from it; the version changes with it."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        mean = before if i < change_at else after
        value = rng.beta(mean * 8, (1 - mean) * 8) if continuous else float(rng.random() < mean)
        version = "1.4.1" if i < change_at else "1.4.2"
        out.append(Observation(float(value), START + 60 * i, f"trace-{i}", {"service.version": version, "x": "y"}))
    return out


def first_alarm(detector: Detector, observations: list):
    for obs in observations:
        alarm = detector.observe(obs)
        if alarm is not None:
            return alarm
    return None


def test_a_drop_alarms_once_with_its_size_start_versions_and_worst_traces():
    observations = stream(6_000, 2_000, 0.8, 0.7, seed=5, continuous=True)
    detector = Detector("faithfulness", 0.8)
    alarms = [a for a in (detector.observe(o) for o in observations) if a is not None]
    assert len(alarms) == 1
    alarm = alarms[0]
    assert alarm.metric == "faithfulness" and alarm.direction == WORSE and alarm.alpha == 0.05
    assert alarm.low <= alarm.change <= alarm.high < 0
    assert abs(alarm.change + 0.1) < 0.05
    assert abs(alarm.started_at - (START + 60 * 2_000)) <= 60 * 300
    assert alarm.fired_at > alarm.started_at and alarm.observations > 2_000
    assert next(iter(alarm.versions["service.version"])) == "1.4.2"
    assert "x" not in alarm.versions
    by_id = {o.trace_id: o for o in observations}
    values = [by_id[t].value for t in alarm.worst_traces]
    assert len(values) == 20 and values == sorted(values)  # lowest (worst) first
    assert all(by_id[t].at >= alarm.started_at for t in alarm.worst_traces)
    assert "Shin, Ramdas & Rinaldo" in alarm.method


def test_direction_follows_the_metric():
    rise = stream(4_000, 1_000, 0.3, 0.45, seed=6)
    assert first_alarm(Detector("hallucination", 0.3, direction="lower"), rise).direction == WORSE
    assert first_alarm(Detector("faithfulness", 0.3), rise).direction == BETTER


def test_no_alarm_before_the_change():
    detector = Detector("m", 0.8)
    assert first_alarm(detector, stream(3_000, 3_000, 0.8, 0.8, seed=7)) is None
    assert detector.summary()["n"] == 3_000


def test_state_restored_mid_stream_gives_identical_alarms_and_summary():
    observations = stream(5_000, 2_500, 0.8, 0.74, seed=8, continuous=True)
    whole = Detector("m", 0.8, margin=0.01)
    expected = [(i, a) for i, a in enumerate(whole.observe(o) for o in observations) if a is not None]
    assert expected, "the stream must alarm for this test to mean anything"
    for cut in (1_000, expected[0][0] - 5):
        first = Detector("m", 0.8, margin=0.01)
        for obs in observations[:cut]:
            first.observe(obs)
        resumed = Detector.restore(json.loads(json.dumps(first.state())))
        got = [(cut + i, a) for i, a in enumerate(resumed.observe(o) for o in observations[cut:]) if a is not None]
        assert got == expected
        assert resumed.summary() == whole.summary()
        assert resumed.state() == whole.state()


def test_restore_refuses_a_foreign_state():
    with pytest.raises(ConfigError, match="format"):
        Detector.restore({"format": 99})


def test_restart_takes_a_new_reference_and_a_fresh_guarantee():
    observations = stream(9_000, 1_500, 0.8, 0.65, seed=9)
    detector = Detector("m", 0.8)
    alarm = first_alarm(detector, observations[:4_000])
    assert alarm is not None
    assert detector.observe(observations[4_000]) is None  # once only
    detector.restart(0.65)  # e.g. a new judge, re-calibrated at the new level
    summary = detector.summary()
    assert summary["n"] == 0 and not summary["fired"] and summary["reference"] == 0.65
    assert first_alarm(detector, observations[4_001:]) is None
    with pytest.raises(ConfigError, match="reference"):
        detector.restart(1.5)


def test_summary_mean_and_confidence_sequence():
    observations = stream(4_000, 4_000, 0.6, 0.6, seed=10, continuous=True)
    detector = Detector("m", 0.6, value_range=(0.0, 1.0))
    for obs in observations:
        detector.observe(obs)
    detector.observe(Observation(float("nan"), START, "unscored", {}))
    summary = detector.summary()
    assert summary["mean"] == pytest.approx(np.mean([o.value for o in observations]))
    assert summary["low"] < 0.6 < summary["high"] and summary["high"] - summary["low"] < 0.1
    assert summary["unscored"] == 1 and summary["n"] == 4_000
    assert summary["evidence"] < summary["threshold"] == 20.0
    json.dumps(summary)


def test_memory_stays_bounded_however_many_traces_and_versions():
    detector = Detector("m", 0.5)
    rng = np.random.default_rng(11)
    sizes = []
    for i in range(30_000):
        detector.observe(Observation(float(rng.random()), START + i, f"t{i}", {"service.version": f"v{i}"}))
        if i + 1 in (3_000, 30_000):
            sizes.append(len(json.dumps(detector.state())))
    state = detector.state()
    assert len(state["trackers"]) <= 12
    assert len(state["totals"]["service.version"]) == MAX_VALUES + 1 and OTHER in state["totals"]["service.version"]
    assert sizes[1] < 1.2 * sizes[0]


def test_bad_input_says_what_and_where():
    detector = Detector("m", 0.5, value_range=(0.0, 1.0))
    with pytest.raises(DatasetError, match="trace t9 has value 1.5, outside the declared range"):
        detector.observe(Observation(1.5, START, "t9", {}))
    with pytest.raises(ConfigError, match="alpha"):
        Detector("m", 0.5, alpha=1.0)
    with pytest.raises(ConfigError, match="direction"):
        Detector("m", 0.5, direction="up")
    with pytest.raises(ConfigError, match="value_range"):
        Detector("m", 0.5, value_range=(1.0, 1.0))


def test_reference_from_a_stored_run():
    values = [1.0, 0.0, 1.0, 1.0, float("nan")]
    assert reference_of(values) == 0.75
    with pytest.raises(DatasetError, match="no scored value"):
        reference_of([float("nan")])
    rng = np.random.default_rng(12)
    small, large = rng.random(100), rng.random(10_000)
    assert reference_uncertainty(large) < reference_uncertainty(small) < 0.5
    assert reference_uncertainty(small * 10, value_range=(0, 10)) == pytest.approx(10 * reference_uncertainty(small))


def test_a_reference_at_the_top_of_the_range_still_detects_a_drop():
    """Reference 1.0 with no margin (every answer right): the down side's band edge is the range's top, no value
    can push a bettor's factor below 1, so it stakes fully, and a run of failures alarms; no failure, no alarm."""
    from ragassay.analysis.monitor import Detector, Observation

    steady, dropped = Detector("m", 1.0), Detector("m", 1.0)
    for t in range(300):
        assert steady.observe(Observation(1.0, float(t), f"s{t}", {})) is None
    alarms = [dropped.observe(Observation(1.0 if t < 100 else 0.0, float(t), f"t{t}", {})) for t in range(300)]
    fired = [t for t, alarm in enumerate(alarms) if alarm is not None]
    assert len(fired) == 1 and 100 <= fired[0] < 300


def test_a_long_shifted_stream_keeps_a_finite_storable_state():
    """20,000 values at 0.6 against a 0.5 reference: the evidence keeps growing after the alarm, but is held at a
    finite cap, so the state is strict JSON (no Infinity) and restores."""
    import json
    import random
    import warnings

    from ragassay.analysis.monitor import Detector, Observation

    rng = random.Random(3)
    detector = Detector("m", 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow in numpy would warn
        fired = [detector.observe(Observation(float(rng.random() < 0.6), float(t), f"t{t}", {})) for t in range(20_000)]
    assert sum(a is not None for a in fired) == 1
    text = json.dumps(detector.state(), allow_nan=False)
    assert Detector.restore(json.loads(text)).state() == detector.state()


@pytest.mark.parametrize(("lo", "hi"), [(0.4, 0.5), (0.8, 0.8), (1.0, 1.0), (0.0, 0.0), (0.0, 1.0)])
def test_the_detectors_float_step_is_the_vectorised_step_to_the_last_bit(lo, hi):
    """Detector.observe takes ev.step / ev.evidence_of on plain floats; first_alarms the numpy functions on rows:
    the same numbers, bit for bit, mixtures held at the cap included."""
    from ragassay.analysis import monitor_evidence as ev

    rng = np.random.default_rng(5)
    rows, k = 400, len(ev.SHIFTS)
    mixture = rng.random((rows, 2, k)) * 10.0 ** rng.integers(-30, 30, (rows, 2, k))
    mixture[:5] = ev.CAP
    var, x = rng.random(rows) * 0.3 + 1e-4, rng.random(rows)
    weight = ev.start_weight(int(rng.integers(1, 10_000)))
    factor = ev.factors(x, ev.stakes(var, lo, hi), lo, hi)
    grown = ev.grow(mixture, weight, factor)
    for row in range(rows):
        one_factor, one_grown = ev.step(mixture[row].tolist(), float(var[row]), float(x[row]), lo, hi, weight)
        assert one_factor == factor[row].tolist() and one_grown == grown[row].tolist()
        assert ev.evidence_of(one_grown) == float(ev.evidence(grown[row][None])[0])
