"""Relevance labels without gold: the pooled top-k of a run's retrievers, graded by a relevance judge, as qrels.

The pool of a query is the union over the run's systems of the first ``depth`` retrieved ids of each system's
output (TREC pooling: Sparck Jones & van Rijsbergen 1975; Voorhees & Harman 2005, "TREC", ch. 2), in the order
the system ranked them, each id once. Every pooled (query, passage) pair is graded by a judge (``umbrela``:
UMBRELA's 0-3 prompt, arXiv:2406.06519), through the public judge interface: the judge gets the query as the
sample's question and the passage as a one-context output, and states the grade in ``details["grade"]``.

Labels are cached by (judge identity, query text, passage text) in a JSONL file (:class:`LabelCache`): pooling
again after adding a retriever judges only the pairs new to the pool, and a changed judge (model, prompt,
options: its identity digest) or a changed passage text is judged afresh. A pair the judge could not grade is
reported with the reason and left out of the qrels (never guessed), and is asked again on the next pooling.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models import RAGOutput, Sample


@dataclasses.dataclass(frozen=True)
class PooledPair:
    """One pooled (query, passage): the sample's id and question, the retrieved id and its text."""

    query_id: str
    doc_id: str
    query: str
    passage: str


@dataclasses.dataclass(frozen=True)
class Pool:
    """The pooled pairs (sorted by query id, then document id) and how many each system brought first."""

    depth: int
    systems: list[str]
    pairs: list[PooledPair]
    text_conflicts: int  # ids retrieved with different texts for one query (the first text is judged)


def pool_run(run: Any, depth: int, systems: Sequence[str] | None = None) -> Pool:
    """The pool of ``run`` (read with payloads): per sample, the union of each system's first ``depth`` ids."""
    if depth < 1:
        raise ConfigError(f"the pool depth must be at least 1, got {depth}")
    chosen = list(systems or run.systems)
    unknown = [s for s in chosen if s not in run.systems]
    if unknown:
        raise ConfigError(
            f"run {run.id[:12]} has no system {', '.join(unknown)}; its systems: {', '.join(run.systems)}"
        )
    found: dict[tuple[str, str], PooledPair] = {}
    conflicts = 0
    for sample in run.samples:
        for system in chosen:
            output = run.payload(system, sample.question_id)
            for doc_id, text in top_passages(output, depth, system, sample.question_id):
                pair = found.setdefault(
                    (sample.question_id, doc_id), PooledPair(sample.question_id, doc_id, sample.question, text)
                )
                conflicts += pair.passage != text
    pairs = [found[key] for key in sorted(found)]
    return Pool(depth, chosen, pairs, conflicts)


def top_passages(output: RAGOutput | None, depth: int, system: str, question_id: str) -> list[tuple[str, str]]:
    """The first ``depth`` distinct (id, text) of an output's retrieved contexts, in rank order."""
    if output is None or not output.contexts:
        return []
    if len(output.context_ids) != len(output.contexts):
        raise ConfigError(
            f"system '{system}', question '{question_id}': the output has {len(output.contexts)} contexts but "
            f"{len(output.context_ids)} context ids; qrels need an id for every retrieved passage"
        )
    seen: dict[str, str] = {}
    for doc_id, text in zip(output.context_ids, output.contexts):
        if len(seen) == depth:
            break
        seen.setdefault(doc_id, text)
    return list(seen.items())


def judge_identity(judge: Any) -> str:
    """The judge's identity (an LLM judge's ``identity``: name, generator, prompt version, digest), else its name
    and a digest of its options."""
    identity = getattr(judge, "identity", None)
    if isinstance(identity, str) and identity:
        return identity
    options = judge.options.model_dump_json() if getattr(judge, "options", None) is not None else ""
    return f"{judge.name}:{hashlib.sha256(options.encode()).hexdigest()[:8]}"


def label_key(identity: str, query: str, passage: str) -> str:
    """The cache key of one label: sha256 of the judge identity, the query text and the passage text."""
    return hashlib.sha256(json.dumps([identity, query, passage], ensure_ascii=False).encode()).hexdigest()


class LabelCache:
    """Graded (query, passage) pairs in a JSONL file, one ``{"key", "judge", "query_id", "doc_id", "grade"}`` per
    line, keyed by :func:`label_key`; new labels are appended."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.grades: dict[str, int] = {}
        if self.path.is_file():
            for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
                if line.strip():
                    key, grade = self._record(line, number)
                    self.grades[key] = grade

    def _record(self, line: str, number: int) -> tuple[str, int]:
        try:
            record = json.loads(line)
            if isinstance(record["key"], str) and isinstance(record["grade"], int):
                return record["key"], record["grade"]
        except (ValueError, KeyError, TypeError):
            pass
        raise ConfigError(f"{self.path}, line {number}: not a relevance label record; delete the file to judge afresh")

    def get(self, identity: str, pair: PooledPair) -> int | None:
        """The cached grade of ``pair`` by the judge ``identity``, or None."""
        return self.grades.get(label_key(identity, pair.query, pair.passage))

    def add(self, identity: str, graded: Sequence[tuple[PooledPair, int]]) -> None:
        """Append graded pairs (and keep them in memory)."""
        if not graded:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            for pair, grade in graded:
                key = label_key(identity, pair.query, pair.passage)
                self.grades[key] = grade
                record = {"key": key, "judge": identity, "query_id": pair.query_id, "doc_id": pair.doc_id}
                handle.write(json.dumps({**record, "grade": grade}, ensure_ascii=False) + "\n")


@dataclasses.dataclass(frozen=True)
class PoolJudging:
    """What judging a pool gave: the qrels, and how many pairs came from the cache, were judged, or failed."""

    judge: str
    depth: int
    systems: list[str]
    qrels: dict[str, dict[str, int]]
    pooled: int
    reused: int
    judged: int
    unusable: list[tuple[str, str, str]]  # (query id, document id, reason)
    text_conflicts: int
    cache: str


def judge_pool(judge: Any, pool: Pool, cache: LabelCache, concurrency: int = 4) -> PoolJudging:
    """Grade every pooled pair not in ``cache`` with ``judge`` (at most ``concurrency`` at once); the qrels hold
    every graded pair, cached or new."""
    identity = judge_identity(judge)
    todo = [pair for pair in pool.pairs if cache.get(identity, pair) is None]
    outcomes = asyncio.run(_grade_all(judge, todo, concurrency)) if todo else []
    graded = [(pair, grade) for pair, (grade, _) in zip(todo, outcomes) if grade is not None]
    cache.add(identity, graded)
    unusable = [(p.query_id, p.doc_id, reason) for p, (grade, reason) in zip(todo, outcomes) if grade is None]
    qrels: dict[str, dict[str, int]] = {}
    for pair in pool.pairs:
        grade = cache.get(identity, pair)
        if grade is not None:
            qrels.setdefault(pair.query_id, {})[pair.doc_id] = grade
    reused = len(pool.pairs) - len(todo)
    return PoolJudging(
        identity, pool.depth, pool.systems, qrels, len(pool.pairs), reused, len(graded), unusable,
        pool.text_conflicts, str(cache.path),
    )  # fmt: skip


async def _grade_all(judge: Any, pairs: Sequence[PooledPair], concurrency: int) -> list[tuple[int | None, str]]:
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(pair: PooledPair) -> tuple[int | None, str]:
        async with gate:
            return await grade_pair(judge, pair)

    return list(await asyncio.gather(*(one(pair) for pair in pairs)))


async def grade_pair(judge: Any, pair: PooledPair) -> tuple[int | None, str]:
    """(grade, "") of one pair by ``judge``, or (None, the reason) when it gave none."""
    sample = Sample(question_id=pair.query_id, question=pair.query)
    output = RAGOutput(answer="", contexts=[pair.passage], context_ids=[pair.doc_id])
    judgement = await judge.judge(sample, output)
    if judgement.score is None:
        return None, judgement.explanation or "the judge gave no grade"
    grade = judgement.details.get("grade")
    if isinstance(grade, bool) or not isinstance(grade, int):
        raise ConfigError(
            f"judge '{judge.name}' states no relevance grade (an integer in its judgement's details['grade']); "
            "use a relevance judge such as umbrela"
        )
    return grade, ""
