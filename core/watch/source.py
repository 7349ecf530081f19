"""Where a watch's traces come from, and what each becomes: every source ends in the results store's traces table
(the OTLP receiver writes it, ``--from-folder`` imports new files into it, ``--from-store`` reads what another
receiver wrote), which the watch tails for complete traces (:mod:`ragassay.watch.tail`);
a complete trace, mapped (:func:`ragassay.traces.map_trace`), is selected by the rules (``sample``, ``where``) and
becomes a sample as the ``traces`` dataset source makes it (question id: the trace id)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..models import Sample
from ..traces.ingest import import_paths
from ..traces.mapping import TraceMapping
from ..traces.model import Trace, Unmapped
from ..traces.otlp import trace_files
from ..traces.reading import TraceLookup
from ..traces.select import Filter, parse_sample, sampled


def trace_sample(trace: Trace) -> Sample:
    """The sample of a trace, as the ``traces`` dataset source makes it (``metadata["trace"]``: its ids)."""
    ids = trace.ids()
    return Sample(
        question_id=trace.trace_id,
        question=trace.question,
        metadata={"trace": ids, "traces": {trace.service_version: dict(ids)}},
        service_version=trace.service_version,
        model=trace.model,
    )


def version_values(trace: Trace, keys: Iterable[str]) -> dict[str, str]:
    """key -> the trace's value of each version key (a mapped field, a resource or span attribute) that it has."""
    found = {}
    for key in keys:
        values = sorted(Filter._value(trace, key) - {""})
        if values:
            found[key] = values[0]
    return found


class Selection:
    """The rules' ``sample`` and ``where``. The sample is applied to trace ids before the traces are read
    (:meth:`in_sample`: the watch's looks, and :func:`ragassay.traces.scan_traces` for a reference window); ``where``
    to the mapped traces (:meth:`reason`)."""

    def __init__(self, sample: str | float | None, where: dict[str, Any]):
        self.fraction = parse_sample(sample)
        self.filter = Filter(where)
        self.sample_text = sample

    @property
    def sample_reason(self) -> str:
        return f"not in the sample ({self.sample_text})"

    def in_sample(self, trace_id: str) -> bool:
        """Whether the trace is in the sample (decided by its id alone, before it is read)."""
        return sampled(trace_id, self.fraction)

    def reason(self, trace: Trace) -> str | None:
        """Why a trace of the sample is left out by ``where``, or None."""
        if self.filter and not self.filter.matches(trace):
            return "left out by [watch] where"
        return None


def mapped(store: Any, trace_ids: list[str], mapping: TraceMapping) -> dict[str, Trace | Unmapped]:
    """The stored traces ``trace_ids``, mapped (or why not)."""
    lookup = TraceLookup(store, mapping=mapping)
    return lookup.lookup(trace_ids)


class FolderFeed:
    """``--from-folder``: the OTLP files of a folder imported into the store when new or changed (by size and
    modification time, kept in the watch's progress); a file that cannot be read yet (still being written) is
    tried again at the next look, and said once."""

    def __init__(self, folder: Path, seen: dict[str, list[int]] | None = None, warn=None):
        self.folder = folder
        self.seen = {k: list(v) for k, v in (seen or {}).items()}
        self.warn = warn or (lambda message: None)
        self.failed: dict[str, str] = {}

    def poll(self, store: Any) -> int:
        """Import the new or changed files; the number imported."""
        imported = 0
        for file in self.files():
            stat = file.stat()
            mark = [stat.st_size, stat.st_mtime_ns]
            if self.seen.get(str(file)) == mark:
                continue
            try:
                import_paths(store, [file])
            except DatasetError as exc:
                if self.failed.get(str(file)) != str(exc):
                    self.warn(f"{file}: not imported yet ({exc}); trying again at the next look")
                    self.failed[str(file)] = str(exc)
                continue
            self.failed.pop(str(file), None)
            self.seen[str(file)] = mark
            imported += 1
        return imported

    def files(self) -> list[Path]:
        """The trace files in the folder now (none yet is no error: the watch waits for them)."""
        if not self.folder.is_dir():
            raise DatasetError(f"--from-folder {self.folder}: no such folder")
        try:
            return trace_files(self.folder)
        except DatasetError:
            return []

    def state(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self.seen.items()}
