"""A run's samples, read from the dataset source once and kept on disk, not in memory.

:class:`SampleSpool` writes each sample's JSON (as :meth:`Sample.model_dump_json` gives it: the text the
fingerprint hashes and the results database stores) to an anonymous temporary file, one line per sample. Every
later pass (the fingerprint, storing the samples of a new run, the work stream, a system's ``check_samples``)
reads that file in order, a block at a time, so the driver's memory does not depend on the number of samples and
the dataset source is read exactly once per run, even when producing samples is costly or not repeatable.

The file lives in the temporary folder (``$TMPDIR``), is about the size of the dataset's JSON, and is removed
when the spool is closed or the process ends (it has no name on disk, so even ``kill -9`` leaves nothing).
"""

from __future__ import annotations

import itertools
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator

from ..models import Sample
from ..sampling import unit_order_key

_BLOCK = 1 << 20  # bytes read at a time
_BUCKET = 1024  # samples per bucket (on average) when shuffling


def _bucket(key: int, buckets: int) -> int:
    return (key * buckets) >> 64


def _head(sample: Sample) -> bytes:
    """A line's head: the question id as JSON, or [question id, conversation] for a conversation's turn."""
    if sample.conversation_id is None:
        return json.dumps(sample.question_id).encode()
    return json.dumps([sample.question_id, sample.conversation_id]).encode()


def _unit(line: bytes) -> tuple[str, str | None]:
    """(question id, conversation or None) of a spooled line."""
    head = json.loads(line.partition(b"\t")[0])
    return (head, None) if isinstance(head, str) else (head[0], head[1])


def _key(seed: int, line: bytes) -> tuple[int, int]:
    return unit_order_key(seed, *_unit(line))


def _flush_all(fd: int, staged: dict[int, list[bytes]], offsets: list[int]) -> None:
    """Write each bucket's staged lines at its next offset, and empty ``staged``."""
    for index, lines in staged.items():
        data = b"".join(lines)
        os.pwrite(fd, data, offsets[index])
        offsets[index] += len(data)
    staged.clear()


class SampleSpool:
    """Samples in reading order, on disk (see the module docstring). Iterating gives :class:`Sample` objects;
    :meth:`records` gives ``(question_id, sample JSON)`` without parsing. ``len()`` is the number of samples."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="ragassay-samples-")
        self._count = 0
        self._size = 0

    @classmethod
    def write(cls, samples: Iterable[Sample], observe: Callable[[Sample], None] | None = None) -> SampleSpool:
        """Spool ``samples`` (``observe`` sees each one on the way: checks that need every sample once)."""
        spool = cls()
        try:
            lines: list[bytes] = []
            for sample in samples:
                if observe is not None:
                    observe(sample)
                lines.append(_head(sample) + b"\t" + sample.model_dump_json().encode())
                if len(lines) >= 1000:
                    spool._append(lines)
                    lines = []
            spool._append(lines)
        except BaseException:
            spool.close()
            raise
        return spool

    def _append(self, lines: list[bytes]) -> None:
        if not lines:
            return
        data = b"\n".join(lines) + b"\n"
        os.pwrite(self._file.fileno(), data, self._size)
        self._size += len(data)
        self._count += len(lines)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Sample]:
        for _, raw in self.records():
            yield Sample.model_validate_json(raw)

    def pairs(self) -> Iterable[tuple[str, str]]:
        """:meth:`records` as an iterable that starts again each time it is iterated (what a retried
        transaction needs: :meth:`ragassay.store.ResultsStore.create_run`)."""
        return _Pairs(self)

    def records(self) -> Iterator[tuple[str, str]]:
        """(question id, sample JSON) per sample, in the dataset's order."""
        for line in self._lines():
            yield _unit(line)[0], line.partition(b"\t")[2].decode()

    def sample_bytes(self) -> Iterator[bytes]:
        """Each sample's JSON as UTF-8 bytes (what the fingerprint hashes), in the dataset's order."""
        for line in self._lines():
            yield line.partition(b"\t")[2]

    def _lines(self) -> Iterator[bytes]:
        """The spooled lines; each iterator keeps its own offset (several may be open at once)."""
        offset, rest = 0, b""
        while offset < self._size:
            block = os.pread(self._file.fileno(), min(_BLOCK, self._size - offset), offset)
            if not block:
                raise OSError("the samples spool file was truncated")
            offset += len(block)
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            yield from lines
        if rest:
            yield rest

    def shuffled(self, seed: int) -> SampleSpool:
        """A new spool of the same samples in a seeded random order: ascending :func:`unit_order_key` (hashes
        of ``seed`` and the conversation, then the question id), the same order in every process and for every
        subset of the samples; the turns of a conversation come together.

        Two passes, memory flat: the first counts the bytes of each of ``len/1024`` buckets (ranges of the key),
        the second writes every line into its bucket's region of the new file; then each bucket is sorted on
        its own, in memory (about 1,024 samples)."""
        buckets = max(1, -(-self._count // _BUCKET))
        sizes = [0] * buckets
        for line in self._lines():
            sizes[_bucket(_key(seed, line)[0], buckets)] += len(line) + 1
        offsets = [0] * buckets
        for index in range(1, buckets):
            offsets[index] = offsets[index - 1] + sizes[index - 1]
        starts = list(offsets)
        out = SampleSpool()
        try:
            staged: dict[int, list[bytes]] = {}
            for number, line in enumerate(self._lines(), 1):
                staged.setdefault(_bucket(_key(seed, line)[0], buckets), []).append(line + b"\n")
                if number % 4096 == 0:  # at most 4,096 lines held at a time
                    _flush_all(out._file.fileno(), staged, offsets)
            _flush_all(out._file.fileno(), staged, offsets)
            for index in range(buckets):  # sort each bucket in place
                if sizes[index]:
                    data = os.pread(out._file.fileno(), sizes[index], starts[index])
                    lines = data.rstrip(b"\n").split(b"\n")
                    lines.sort(key=lambda line: _key(seed, line))
                    os.pwrite(out._file.fileno(), b"\n".join(lines) + b"\n", starts[index])
            out._size, out._count = sum(sizes), self._count
        except BaseException:
            out.close()
            raise
        return out

    def part(self, start: int, stop: int) -> SampleSpool:
        """A new spool of the samples at positions ``start`` to ``stop`` (excluded), in this spool's order."""
        out = SampleSpool()
        try:
            lines = itertools.islice(self._lines(), start, stop)
            while block := list(itertools.islice(lines, 1000)):
                out._append(block)
        except BaseException:
            out.close()
            raise
        return out

    def parts(self, ends: Iterable[int]) -> Iterator[SampleSpool]:
        """New spools of consecutive runs of samples ending at positions ``ends`` (increasing), read in one pass
        (a sequential run's batches: :meth:`part` per batch would read the spool from its start each time).
        The caller closes each."""
        lines, start = self._lines(), 0
        for end in ends:
            out = SampleSpool()
            try:
                while block := list(itertools.islice(lines, min(1000, end - start - out._count))):
                    out._append(block)
            except BaseException:
                out.close()
                raise
            start = end
            yield out

    def close(self) -> None:
        """Remove the file (idempotent)."""
        self._file.close()

    def __del__(self) -> None:
        file = getattr(self, "_file", None)
        if file is not None:
            file.close()


class _Pairs:
    """The (question id, sample JSON) records of a spool, from the start on every iteration."""

    def __init__(self, spool: SampleSpool):
        self.spool = spool

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return self.spool.records()

    def __len__(self) -> int:
        return len(self.spool)
