"""Rolling judge-budget windows: every minute that overlaps the last hour (day) counts, so a limit is never passed;
spending older than a day is forgotten."""

from __future__ import annotations

from ragassay.config.watch import WatchBudget
from ragassay.watch.budget import RollingSpend

T = 1_700_000_040.0  # a whole minute


def test_what_is_left_counts_every_minute_that_overlaps_the_window():
    spend = RollingSpend(WatchBudget(calls_per_hour=10, calls_per_day=15))
    spend.add(T + 59, 6, 0.0)
    assert spend.left(T + 60) == (4, None)
    assert spend.left(T + 3600 + 30) == (4, None)  # the minute of the spend still overlaps the hour
    assert spend.left(T + 3600 + 61) == (9, None)  # the hour is free again; the day still counts the 6
    spend.add(T + 7200, 8, 0.0)
    assert spend.left(T + 7200) == (1, None)  # the day's 15 bind before the hour's 10


def test_an_empty_window_gives_a_ledger_that_refuses_and_old_minutes_are_forgotten():
    spend = RollingSpend(WatchBudget(usd_per_hour=1.0))
    spend.add(T, 0, 1.0)
    ledger = spend.ledger(T + 10, None)
    assert ledger is not None and ledger.stopped and "used up" in ledger.stopped
    spend.add(T + 2 * 86_400, 1, 0.0)
    assert [bucket[0] for bucket in spend.state()] == [int((T + 2 * 86_400) // 60)]
    assert RollingSpend(WatchBudget()).ledger(T, None) is None
