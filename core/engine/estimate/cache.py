"""The response-cache pass of ``ragassay estimate``: which model calls the LLM response cache already answers.

The plan runs once through the real :class:`~ragassay.engine.runner.Runner` (its systems, metrics and judges, every
sample), into a throwaway results database, with a :class:`CacheOnly` ledger in place of a budget: a call
whose reply is in the cache is served from it, as in a real run, for free; a call that would reach a model is
refused (:class:`~ragassay.llm.budget.BudgetExhausted`, never sent), which stops that unit's answer or that
metric or judge value, and nothing of it is stored. So what the pass stores is exactly what the cache answers
in full; the estimate counts it as free (:attr:`~ragassay.engine.estimate.rows.Row.cached_calls`). A value of which only
some calls are cached is counted in full from its pattern (an upper bound). Nothing is called and the
project's results database is not touched; the pass costs the run's work without its model calls (retrieval,
offline metrics), which is why ``ragassay run`` does not make it before it starts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ...llm.budget import BudgetExhausted
from .stored import StoredWork, units_of


class CacheOnly:
    """A budget ledger that refuses every attempt at a model (cache hits never reach it) without stopping the
    session: each refused call stops only its own unit or value."""

    stopped = None
    calls = 0

    def check_time(self) -> None:
        return None

    def reserve(self, request: Any, model_key: str) -> Any:
        raise BudgetExhausted(f"not in the response cache ({model_key})")

    def settle(self, ticket: Any, usage: Any) -> None:  # pragma: no cover - reserve never returns
        raise AssertionError("a cache-only pass makes no call")


def cache_pass(plan: Any) -> StoredWork:
    """What the response cache answers in full for ``plan``: the units a cache-only pass stored (``note`` says
    why there is none: the cache is off, or empty)."""
    llm = plan.context.settings["llm"]
    if not llm.get("cache"):
        return StoredWork(None, {}, "the LLM response cache is off: no cache hits to subtract")
    url = llm.get("cache_url") or ""
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return StoredWork(None, {})  # no cache yet: nothing in it
    from ...store import open_store
    from ..interruptible import run_interruptibly
    from ..runner import Runner

    with tempfile.TemporaryDirectory(prefix="ragassay-cache-pass-") as folder:
        store = open_store(f"sqlite:///{Path(folder) / 'cache-pass.db'}")
        try:
            runner = Runner(plan, store, description="estimate: cache-only pass (throwaway)", ledger=CacheOnly())
            summary = run_interruptibly(lambda: runner.run(new=True))
            return StoredWork(summary.run_id, units_of(store, summary.run_id, plan))
        finally:
            store.close()
