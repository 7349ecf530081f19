"""Drift windows: per-day and per-week means with intervals, the windows that differ from the reference."""

from __future__ import annotations

import pytest

from ragassay.analysis.trend import trend, window_of
from ragassay.errors import ConfigError

from trace_runs import DAYS, PER_DAY, make_run, read


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trend")
    return read(folder, make_run(folder, untimed=1))


def test_windows_are_utc_days_and_iso_weeks():
    assert window_of(1_741_046_400 * 10**9, "day") == ("2025-03-04", 1_741_046_400 * 10**9)
    assert window_of(1_741_046_400 * 10**9 - 1, "day")[0] == "2025-03-03"
    label, start = window_of(1_741_046_400 * 10**9, "week")  # Tuesday 4 March 2025: week 10, from Monday 3rd
    assert (label, start) == ("2025-W10", (1_741_046_400 - 86_400) * 10**9)
    assert window_of(1_735_603_200 * 10**9, "week")[0] == "2025-W01"  # Tuesday 31 December 2024


def test_the_drifting_day_is_flagged_worse_and_the_steady_day_is_not(run):
    result = trend(run, metrics=["exact_match"])
    series = result.series("app", "exact_match")
    assert [w.window for w in series] == ["2025-03-04", "2025-03-05", "2025-03-06"]
    assert result.reference == "2025-03-04" and series[0].reference
    assert [w.n for w in series] == [PER_DAY - 1, PER_DAY, PER_DAY]  # one sample has no trace start
    assert result.untimed == 1 and result.samples == DAYS * PER_DAY - 1
    assert [w.mean for w in series] == [1.0, 1.0, 0.25]
    assert series[1].flag == "" and series[1].reason  # no variation in either group: no interval
    drifted = series[2]
    assert drifted.flag == "lower" and drifted.change == "worse"
    assert drifted.difference == pytest.approx(-0.75)
    assert drifted.diff_low <= -0.75 <= drifted.diff_high < 0
    assert drifted.ci_low < 0.25 < drifted.ci_high
    assert result.level["app/exact_match"] == pytest.approx(1 - 0.05 / 2)  # Bonferroni over 2 windows
    assert result.flagged == [drifted]


def test_a_later_reference_flags_the_earlier_days_higher(run):
    result = trend(run, metrics=["exact_match"], reference="2025-03-06")
    flags = [(w.window, w.flag, w.change) for w in result.series("app", "exact_match")]
    assert flags == [("2025-03-04", "higher", "better"), ("2025-03-05", "higher", "better"), ("2025-03-06", "", "")]


def test_by_week_puts_every_day_in_one_window_and_every_column_by_default(run):
    result = trend(run, by="week")
    assert result.metrics == ["exact_match", "token_f1", "judge:match"]
    assert {w.window for w in result.windows} == {"2025-W10"}
    assert not result.flagged


def test_same_numbers_for_the_same_seed_and_errors_name_the_fix(run):
    first, again = trend(run, seed=3), trend(run, seed=3)
    assert first == again
    with pytest.raises(ConfigError, match="no trace falls in that day.*2025-03-04, 2025-03-05, 2025-03-06"):
        trend(run, reference="2025-03-09")
    with pytest.raises(ConfigError, match="did not score it"):
        trend(run, metrics=["faithfulness"])
    with pytest.raises(ConfigError, match="day or week"):
        trend(run, by="month")


def test_a_run_not_from_traces_is_refused(tmp_path):
    folder = tmp_path
    run_id = make_run(folder, untimed=DAYS * PER_DAY)
    with pytest.raises(ConfigError, match="no sample carries a trace start"):
        trend(read(folder, run_id))
