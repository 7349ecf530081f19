"""Writers for the concurrent-writer tests of the results store (imported by spawned processes).

Every writer writes its share of the units of two runs in batches, with ``replace_existing=True``; the units
at overlapping positions are written by two writers, as when a crashed worker's unit is redone elsewhere.
"""

from __future__ import annotations

import time

RUNS = ("run_a", "run_b")
SYSTEMS = ("sys1", "sys2")
QUESTIONS = tuple(f"q{i:03d}" for i in range(60))
METRICS = ("m1", "m2", "m3")
BATCH = 10
SHARED = 7  # context texts shared by the outputs of every writer


def all_units() -> list[tuple[str, str, str]]:
    """(run, system, question_id) of every unit, in one fixed order."""
    return [(r, s, q) for r in RUNS for s in SYSTEMS for q in QUESTIONS]


def writers_of(position: int, writers: int) -> set[int]:
    """The writers of the unit at ``position``: one, or two for every third unit (the overlaps)."""
    first = position % writers
    return {first, (first + 1) % writers} if position % 3 == 0 else {first}


def contexts_of(question: str) -> list[str]:
    """The contexts of a question's outputs: two of :data:`SHARED` texts (every writer stores them at once) and
    one of its own."""
    i = int(question[1:])
    return [f"shared context {i % SHARED}", f"shared context {(i + 3) % SHARED}", f"the context of {question}"]


def create_runs(url: str) -> None:
    from ragassay.store import open_store

    from written_runs import empty_run

    store = open_store(url)
    for run in RUNS:
        empty_run(store, run, SYSTEMS, QUESTIONS)
    store.close()


def write_share(url: str, writer: int, writers: int, start_at: float) -> None:
    """Write this writer's units (both runs interleaved) in batches, starting at ``start_at``."""
    from ragassay.models import Judgement, MetricValue, RAGOutput
    from ragassay.store import open_store
    from ragassay.store.database import UnitResult

    store = open_store(url)
    mine = [unit for position, unit in enumerate(all_units()) if writer in writers_of(position, writers)]
    mine.sort(key=lambda unit: (unit[2], unit[0], unit[1]))  # both runs and systems in every batch
    while time.time() < start_at:
        time.sleep(0.002)
    for start in range(0, len(mine), BATCH):
        by_run: dict[str, list[UnitResult]] = {}
        for run, system, question in mine[start : start + BATCH]:
            by_run.setdefault(run, []).append(
                UnitResult(
                    system,
                    question,
                    "ok",
                    RAGOutput(answer=f"{run} {system} {question} by {writer}", contexts=contexts_of(question)),
                    metrics=[MetricValue(metric=m, value=float(i)) for i, m in enumerate(METRICS)],
                    judgements=[Judgement(judge="j", verdict="correct", score=1.0)],
                )
            )
        for run, results in sorted(by_run.items()):
            store.write_units(run, results, replace_existing=True)
    store.close()
