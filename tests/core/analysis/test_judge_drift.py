"""The judges-check rules: the outcome from the change's interval at the margin, and the warnings compare prints
from the stored checks and the calibrated identities (the end-to-end check is tests/core/cli/test_judges_cmd_check.py)."""

from __future__ import annotations

import pytest

from ragassay.analysis.agreement import Estimate
from ragassay.analysis.judge_drift import DROPPED, HELD, MAYBE, calibration_warnings, outcome


@pytest.mark.parametrize(
    "change, expected",
    [
        (Estimate(-0.30, -0.40, -0.20, 50), DROPPED),  # the whole interval below -margin
        (Estimate(-0.10, -0.15, -0.11, 50), DROPPED),
        (Estimate(-0.05, -0.15, 0.05, 50), MAYBE),  # -margin inside the interval
        (Estimate(-0.12, -0.20, -0.10, 50), MAYBE),  # the upper bound at -margin: not below it
        (Estimate(0.00, -0.10, 0.05, 50), HELD),  # the lower bound at -margin
        (Estimate(0.20, 0.10, 0.30, 50), HELD),
        (Estimate(None, None, None, 50, "one class only"), MAYBE),  # undefined: never called held
    ],
)
def test_the_outcome_reads_the_interval_against_the_margin(change, expected):
    assert outcome(change, margin=0.1) == expected


def record(identity: str, result: str, at: float, value=-0.4, low=-0.5, high=-0.3) -> dict:
    return {
        "identity": identity,
        "outcome": result,
        "statistic": "kappa",
        "items": 60,
        "run_id": "abcdef1234567890",
        "change": {"value": value, "low": low, "high": high},
        "checked_at": at,
    }


def test_a_drop_at_the_last_check_is_one_line_and_a_later_held_check_clears_it():
    deciding = {"j:openai:v1:aaaa": {"judge:j"}}
    dropped = [record("j:openai:v1:aaaa", DROPPED, 1.0)]
    (line,) = calibration_warnings(deciding, dropped, {"j:openai:v1:aaaa"})
    assert line.startswith("warning: judge j:openai:v1:aaaa (judge:j) dropped in agreement with people")
    assert "kappa change -0.400 [-0.500, -0.300], 60 items of run abcdef123456" in line
    later = dropped + [record("j:openai:v1:aaaa", HELD, 2.0, 0.0, -0.05, 0.05)]
    assert calibration_warnings(deciding, list(reversed(later)), {"j:openai:v1:aaaa"}) == []
    maybe = [record("j:openai:v1:aaaa", MAYBE, 3.0, None, None, None)]
    (line,) = calibration_warnings(deciding, later + maybe, set())
    assert "may have dropped" in line and "change ? [?, ?]" in line


def test_a_judge_never_calibrated_is_warned_about_and_a_calibrated_one_is_not():
    deciding = {"new:openai:v1:bbbb": {"judge:j", "judge:k"}, "old:openai:v1:cccc": {"judge:m"}}
    (line,) = calibration_warnings(deciding, [], {"old:openai:v1:cccc"})
    assert line.startswith("warning: judge new:openai:v1:bbbb (judge:j, judge:k) has no calibration items")
    assert calibration_warnings({}, [record("x", DROPPED, 1.0)], set()) == []  # a judge that decides nothing
