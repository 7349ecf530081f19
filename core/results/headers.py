"""Every run's header without its samples, outputs or scores (:func:`read_run_headers`), as inspect_ai reads a
log's header without its samples: what ``ragassay runs`` and the runs page of ``ragassay serve`` show."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class RunHeader:
    """One stored run at a glance: identity, project, state, systems, how much is stored, config, description.

    ``state`` and ``state_detail`` are the store's (from the run's lease: ``running (pid N on HOST)``,
    ``complete``, ``interrupted``, ...); empty when the store gives none, then :attr:`status` is all there is.
    """

    id: str
    fingerprint: str
    project: str
    config_path: str
    description: str
    created_at: float
    updated_at: float
    status: str  # the stored status column
    state: str
    state_detail: str
    ragassay_version: str
    sample_count: int
    systems: tuple[str, ...]  # in the run's order
    outputs: int  # outputs stored
    failed: int  # of them, failed

    @property
    def expected(self) -> int:
        """The outputs a complete run stores: one per system and sample."""
        return len(self.systems) * self.sample_count


def read_run_headers(store: Any) -> list[RunHeader]:
    """Every run of ``store`` (a :class:`ragassay.store.protocols.ResultsReader`), newest first, as its header:
    one listing of the runs, and each run's systems."""
    return [_header(row, store.run_systems(row["id"])) for row in store.list_runs()]


def _header(row: dict[str, Any], systems: list[dict[str, Any]]) -> RunHeader:
    return RunHeader(
        id=row["id"],
        fingerprint=row["fingerprint"],
        project=row["project"],
        config_path=row["config_path"],
        description=row.get("description") or "",
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        status=row["status"],
        state=row.get("state") or "",
        state_detail=row.get("state_detail") or "",
        ragassay_version=row["ragassay_version"],
        sample_count=row["sample_count"],
        systems=tuple(s["name"] for s in systems),
        outputs=row["outputs"] or 0,
        failed=row["failed"] or 0,
    )
