"""The watch's judge budget: at most so many model calls (and US dollars) in any rolling hour and any rolling day
(``[watch] budget``), whatever the rate at which traces arrive.

What was spent is kept per minute (:data:`BUCKET_S`) in the watch's stored progress, committed with the values it
paid for. A window counts every minute that overlaps it, so the rolling limits hold exactly, never more (a call
leaves the count up to a minute late). Each batch of traces is scored under a
:class:`~ragassay.llm.budget.BudgetLedger` allowed only what is left in both windows: every model call of a metric or
judge reserves its worst case first (:mod:`ragassay.llm.budget`), so no call starts that could pass a limit; a
value whose call was refused is stored as unscored with the reason, and its trace counted as unscored for budget.
"""

from __future__ import annotations

import math
from typing import Any

from ..config.watch import WatchBudget
from ..llm.budget import Budget, BudgetLedger

BUCKET_S = 60.0
HOUR_S, DAY_S = 3600.0, 86_400.0


class RollingSpend:
    """Spend per minute over the last day: ``[[minute, calls, usd], ...]``, oldest first."""

    def __init__(self, limits: WatchBudget, buckets: list[list[float]] | None = None):
        self.limits = limits
        self.buckets = [list(b) for b in buckets or []]

    def state(self) -> list[list[float]]:
        return [list(b) for b in self.buckets]

    def within(self, now: float, seconds: float) -> tuple[int, float]:
        """(calls, usd) spent in the minutes that overlap the last ``seconds`` before ``now``."""
        start = math.floor((now - seconds) / BUCKET_S)
        calls, usd = 0, 0.0
        for minute, spent_calls, spent_usd in self.buckets:
            if minute >= start:
                calls, usd = calls + int(spent_calls), usd + spent_usd
        return calls, usd

    def left(self, now: float) -> tuple[int | None, float | None]:
        """(calls, usd) that may still be spent now in both windows; None where no limit is set."""
        calls: int | None = None
        usd: float | None = None
        limits = self.limits
        for seconds, call_limit, usd_limit in (
            (HOUR_S, limits.calls_per_hour, limits.usd_per_hour),
            (DAY_S, limits.calls_per_day, limits.usd_per_day),
        ):
            spent_calls, spent_usd = self.within(now, seconds)
            if call_limit is not None:
                calls = min(calls if calls is not None else call_limit, max(0, call_limit - spent_calls))
            if usd_limit is not None:
                usd = min(usd if usd is not None else usd_limit, max(0.0, usd_limit - spent_usd))
        return calls, usd

    def ledger(self, now: float, prices: Any) -> BudgetLedger | None:
        """A ledger allowed what is left now (None without limits); one with nothing left refuses every call."""
        if not self.limits.is_set():
            return None
        calls, usd = self.left(now)
        empty = calls == 0 or (usd is not None and usd <= 0)
        budget = Budget(calls=calls or None, usd=usd or None) if not empty else Budget(calls=1)
        ledger = BudgetLedger(budget, prices)
        if empty:
            ledger.stopped = f"the watch's judge budget ({self.limits.describe()}) is used up for now"
        return ledger

    def add(self, now: float, calls: int, usd: float) -> None:
        """Record spending at ``now`` and forget minutes older than a day."""
        if calls or usd:
            minute = math.floor(now / BUCKET_S)
            if self.buckets and self.buckets[-1][0] == minute:
                self.buckets[-1][1] += calls
                self.buckets[-1][2] += usd
            else:
                self.buckets.append([minute, calls, usd])
        oldest = math.floor((now - DAY_S) / BUCKET_S) - 1
        self.buckets = [b for b in self.buckets if b[0] >= oldest]

    def report(self, now: float) -> dict[str, Any]:
        """Spent in the last hour and day, with the limits (JSON)."""
        hour, day = self.within(now, HOUR_S), self.within(now, DAY_S)
        return {
            "limits": {k: v for k, v in self.limits.model_dump().items() if v is not None},
            "last_hour": {"calls": hour[0], "usd": round(hour[1], 6)},
            "last_day": {"calls": day[0], "usd": round(day[1], 6)},
        }
