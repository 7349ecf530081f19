"""A run's work, streamed: work items made chunk by chunk from the spooled samples and what the store holds.

The runner never lists a run's work. :class:`WorkStream` reads :data:`CHUNK` samples at a time from the
:class:`~ragassay.engine.spool.SampleSpool`, reads back what is stored for exactly those samples (a resume: the unique
index on (run, system, question_id)) and, for units with nothing of their own, the outputs of earlier runs with
the same keys (``ix_outputs_reuse``), and yields :class:`~ragassay.engine.processing.WorkItem` objects: units sharing an
output (the same system key on the same sample) grouped into one item, units already complete skipped. Memory
holds one chunk, whatever the number of samples.

A fresh run with nothing to reuse reads no units back at all; a resume or a run that may reuse outputs is
surveyed first (:meth:`WorkStream.survey`: the same chunks, without parsing samples) for the progress total
and the systems to build.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..models import Sample
from ..store.units import StoredUnit
from .processing import WorkItem
from .spool import SampleSpool

if TYPE_CHECKING:
    from ..store.database import ResultsStore

CHUNK = 500  # samples per chunk


@dataclasses.dataclass
class _Group:
    """A work item before its sample is parsed."""

    question_id: str
    raw: str  # the sample's JSON
    sample_key: str
    system_key: str
    units: list[tuple[Any, StoredUnit | None]]
    reusable: int | None = None


class WorkStream:
    """The work of one run (see the module docstring).

    :param systems: the run's resolved systems, in order; ``system_keys`` maps their names to their keys.
    :param is_done: whether a stored unit is complete (every label and repeat stored with an ok output).
    :param reuse: whether outputs of earlier runs may be copied (``run --new`` turns it off).
    """

    def __init__(
        self,
        samples: SampleSpool,
        systems: list[Any],
        system_keys: dict[str, str],
        is_done: Callable[[StoredUnit], bool],
        store: ResultsStore,
        run_id: str,
        *,
        reuse: bool = True,
    ):
        self.samples = samples
        self.systems = systems
        self.system_keys = system_keys
        self.is_done = is_done
        self.store = store
        self.run_id = run_id
        self.resuming = store.has_outputs(run_id)
        self.reuse = reuse and store.has_reusable(run_id, sorted(set(system_keys.values())))

    def survey(self) -> tuple[int, set[str]]:
        """(units already complete, names of the systems with work that is not a copy of an earlier output:
        the systems to build)."""
        if not self.resuming and not self.reuse:
            return 0, {system.name for system in self.systems}
        skipped, names = 0, set()
        for done, groups in self._chunks():
            skipped += done
            names |= {system.name for group in groups if group.reusable is None for system, _ in group.units}
        return skipped, names

    def done(self) -> tuple[int, int]:
        """(units complete, samples whose every unit is complete), read back from the store chunk by chunk."""
        records = self.samples.records()
        names = [system.name for system in self.systems]
        units = samples = 0
        while chunk := [qid for qid, _ in itertools.islice(records, CHUNK)]:
            stored = self.store.stored_units_of(self.run_id, names, chunk)
            for qid in chunk:
                complete = sum(1 for name in names if (u := stored.get((name, qid))) is not None and self.is_done(u))
                units += complete
                samples += complete == len(names)
        return units, samples

    def items(self) -> Iterator[WorkItem]:
        """The work items, chunk by chunk (samples parsed once per chunk)."""
        for _, groups in self._chunks():
            parsed: dict[str, Sample] = {}
            for group in groups:
                sample = parsed.get(group.question_id)
                if sample is None:
                    sample = parsed[group.question_id] = Sample.model_validate_json(group.raw)
                yield WorkItem(sample, group.sample_key, group.system_key, group.units, group.reusable)

    def _chunks(self) -> Iterator[tuple[int, list[_Group]]]:
        """(units complete, groups with work) per chunk of samples."""
        records = self.samples.records()
        names = [system.name for system in self.systems]
        while chunk := list(itertools.islice(records, CHUNK)):
            ids = [qid for qid, _ in chunk]
            stored = self.store.stored_units_of(self.run_id, names, ids) if self.resuming else {}
            groups: dict[tuple[str, str], _Group] = {}
            keys: dict[str, str] = {}  # question id -> sample key (a hash of the sample as given)
            done = 0
            for qid, raw in chunk:  # sample by sample: a run stopped early has every system on the same samples
                for system in self.systems:
                    system_key = self.system_keys[system.name]
                    unit = stored.get((system.name, qid))
                    if unit is not None and self.is_done(unit):
                        done += 1
                        continue
                    group = groups.get((system_key, qid))
                    if group is None:
                        key = keys.get(qid) or keys.setdefault(qid, hashlib.sha256(raw.encode()).hexdigest())
                        group = groups[(system_key, qid)] = _Group(qid, raw, key, system_key, [])
                    group.units.append((system, unit))
            if self.reuse:
                self._mark_reusable(list(groups.values()))
            yield done, list(groups.values())

    def _mark_reusable(self, groups: list[_Group]) -> None:
        """Mark groups whose output an earlier run produced (same system spec and corpus, same sample)."""
        fresh = [group for group in groups if not any(unit and unit.status == "ok" for _, unit in group.units)]
        if not fresh:
            return
        found = self.store.reusable_outputs(
            self.run_id,
            sorted({group.system_key for group in fresh}),
            sorted({group.sample_key for group in fresh}),
        )
        for group in fresh:
            group.reusable = found.get((group.system_key, group.sample_key))
