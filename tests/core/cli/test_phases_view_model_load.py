"""The dense model's load is a build phase of one unit (issue 38, item 12): its lines say how long it has taken,
never '0/1 model' with a rate that is the load time."""

from __future__ import annotations

from ragassay import PhaseProgress
from ragassay.cli.progress import PlainProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_model_load_prints_its_elapsed_time_then_the_embedding_counts_chunks_from_its_own_start():
    clock, lines = Clock(), []
    progress = PlainProgress(1.0, echo=lines.append, clock=clock)
    progress.total, progress._started, progress._last_line = 10, clock.now, clock.now
    progress.phase(PhaseProgress("building systems", 0, 1, "systems", note="dense"))
    progress.phase(PhaseProgress("embedding model load", 0, 1, "model"))
    clock.now += 3
    progress.tick()
    assert lines == ["building: dense (1/1): embedding model load, elapsed 3.0s"]
    clock.now += 9
    progress.phase(PhaseProgress("embedding model load", 1, 1, "model"))
    assert lines[-1] == "built: dense: embedding model load: done in 12.0s"
    progress.phase(PhaseProgress("corpus embedding", 0, 13, "chunks"))
    clock.now += 2
    progress.phase(PhaseProgress("corpus embedding", 13, 13, "chunks"))
    assert lines[-1] == "built: dense: corpus embedding: 13 chunks in 2.0s (6.5 chunks/s)"
