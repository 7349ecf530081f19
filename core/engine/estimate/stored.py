"""What an estimate need not count because it is already stored: the units of the run a ``ragassay run`` of the
same plan would resume (the newest run with the plan's fingerprint, as :meth:`Runner.open_run
<ragassay.engine.runner.Runner.open_run>` finds it).

A stored ok output costs its system nothing; a metric value or judgement stored for it costs that metric or
judge nothing. A failed unit is run again from the start (its rows are replaced), so it is counted in full.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

CHUNK = 500  # samples read back per query batch (as :mod:`ragassay.engine.work`)


@dataclasses.dataclass
class StoredWork:
    """The stored units of the run being resumed: (system, question id) ->
    :class:`~ragassay.store.units.StoredUnit`."""

    run_id: str | None
    units: dict[tuple[str, str], Any]
    note: str = ""  # why nothing is subtracted, when nothing is

    def has(self, system: str, component: str, question_id: str) -> bool:
        """Whether ``component`` ("system", "metric:LABEL" or "judge:LABEL") is stored for the unit."""
        unit = self.units.get((system, question_id))
        if unit is None or unit.status != "ok":
            return False
        kind, _, label = component.partition(":")
        if kind == "system":
            return True
        return label in (unit.metrics if kind == "metric" else unit.judges)


def stored_work(plan: Any) -> StoredWork:
    """The stored units of the run with ``plan``'s fingerprint in the config's results database (none when
    there is no database yet or no such run; a database that cannot be opened is said in ``note``). Never
    creates a database."""
    from ...errors import StoreError
    from ...store.urls import sqlite_file, store_url

    project = plan.loaded.config.project
    url = store_url(project.results, plan.loaded.base_dir)
    path = sqlite_file(url)
    if path is not None and not path.exists():
        return StoredWork(None, {})  # no database yet (and no SQLAlchemy import for finding that out)
    from ...store import open_store

    try:
        store = open_store(url, create=False, retry_s=project.results_retry_s)
    except StoreError as exc:
        missing = str(exc).startswith("no results database")
        return StoredWork(None, {}, "" if missing else f"stored work not subtracted: {exc}")
    try:
        run = store.find_run(plan.fingerprint())
        if run is None or not store.has_outputs(run["id"]):
            return StoredWork(None if run is None else run["id"], {})
        return StoredWork(run["id"], units_of(store, run["id"], plan))
    finally:
        store.close()


def units_of(store: Any, run_id: str, plan: Any) -> dict[tuple[str, str], Any]:
    """Every stored unit of ``run_id`` for ``plan``'s systems and samples, read chunk by chunk."""
    names = [system.name for system in plan.systems]
    units: dict[tuple[str, str], Any] = {}
    records = plan.samples.records()
    while chunk := [qid for qid, _ in itertools.islice(records, CHUNK)]:
        units.update(store.stored_units_of(run_id, names, chunk))
    return units
