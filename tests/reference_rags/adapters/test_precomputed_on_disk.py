"""The precomputed adapter holds no rows in memory once prepared (issue 38, item 34: the driver grew 57 MiB from
20,000 to 100,000 samples): they are kept on disk and read back per sample. Checked on the adapter's own data,
not on the process's memory: no object it holds contains any row's answer. A question id given twice is still
the first error, across the batches written to disk, and rows that match no sample are still reported."""

from __future__ import annotations

import asyncio
import json

import pytest

from ragassay import ComponentContext, DatasetError, Sample
from ragassay.reference_rags.adapters.precomputed import PrecomputedOptions, PrecomputedRAG

BATCH = 2_000  # the adapter's rows per batch written to disk (ragassay.reference_rags.adapters.row_file.BATCH)
ROWS = 3 * BATCH + 17  # several batches on disk and one held at the end


def _rag(tmp_path, lines: list[str]) -> PrecomputedRAG:
    (tmp_path / "outputs.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return PrecomputedRAG(PrecomputedOptions(path="outputs.jsonl"), context=ComponentContext(project_dir=tmp_path))


def _row(i: int, **extra) -> str:
    return json.dumps({"question_id": f"q{i}", "answer": f"ANSWER-{i:05d}", "contexts": [f"context {i}"], **extra})


def _strings_held(root: object) -> list[str]:
    """Every string reachable from ``root`` through containers and our own objects' attributes (its context and
    classes aside): what the adapter holds in Python memory."""
    seen, found, todo = set(), [], [v for k, v in vars(root).items() if k != "context"]
    while todo:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            found.append(obj)
        elif isinstance(obj, dict):
            todo += [*obj.keys(), *obj.values()]
        elif isinstance(obj, (list, tuple, set, frozenset)):
            todo += list(obj)
        elif type(obj).__module__.startswith("ragassay") and hasattr(obj, "__dict__"):
            todo += list(vars(obj).values())
    return found


def test_a_prepared_adapter_holds_no_row_and_answers_each_sample_from_disk(tmp_path):
    rag = _rag(tmp_path, [_row(i) for i in range(ROWS)])
    rag.prepare(None)
    try:
        held = [s for s in _strings_held(rag) if "ANSWER-" in s]
        assert held == [], f"{len(held)} rows held in memory, e.g. {held[:1]}"
        for i in (0, BATCH, ROWS - 1):
            output = asyncio.run(rag.answer(Sample(question_id=f"q{i}", question="?")))
            assert output.answer == f"ANSWER-{i:05d}" and output.contexts == [f"context {i}"]
        with pytest.raises(LookupError, match="no precomputed output for question_id 'nope'"):
            asyncio.run(rag.answer(Sample(question_id="nope", question="?")))
        samples = [Sample(question_id=f"q{i}", question="?") for i in range(7, ROWS)]
        assert rag.check_samples(samples) == ["outputs.jsonl: 7 row(s) match no sample: q0, q1, q2, q3, q4 and 2 more"]
    finally:
        asyncio.run(rag.aclose())


def test_a_question_id_given_twice_is_the_first_error_across_batches(tmp_path):
    lines = [_row(i) for i in range(ROWS)]
    lines[BATCH + 5] = _row(3)  # the same id as line 4, in the next batch
    lines[BATCH + 9] = "{broken"  # a later error: the duplicate comes first
    with pytest.raises(DatasetError, match=rf"line {BATCH + 6}: question_id 'q3' already on line 4\."):
        _rag(tmp_path, lines).prepare(None)
    lines[BATCH + 5] = _row(BATCH + 5)
    with pytest.raises(DatasetError, match=rf"line {BATCH + 10}: not valid JSON"):
        _rag(tmp_path, lines).prepare(None)
