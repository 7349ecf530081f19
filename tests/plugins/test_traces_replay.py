"""``trace_replay`` reads its traces in bulk: the samples the run's workers ask for together are looked up in one
query, each gets its own trace's output, and a missing or unmappable trace fails only its own sample."""

from __future__ import annotations

import asyncio
import json

import pytest
from sqlalchemy import event

from ragassay.components import ComponentContext
from ragassay.models import Sample
from ragassay.plugin_manager import get_plugin_host
from ragassay.store import open_store
from ragassay.traces.ingest import import_paths

from otlp_traces import openinference_trace, request, sid, span, tid


@pytest.fixture
def replay(tmp_path):
    spans = [span(tid(9), sid(9, 1), None, "root", {"input.value": "q?"})]  # no answer: unmappable
    for n in range(1, 5):
        spans += openinference_trace(n, f"Question {n}?", f"answer {n}")
    (tmp_path / "t.json").write_text(json.dumps(request(spans)), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'results.db'}"
    store = open_store(url)
    import_paths(store, [tmp_path / "t.json"])
    store.close()
    context = ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "c")
    rag = context.build("rag", {"name": "trace_replay", "options": {"store": url}})
    rag.prepare(None)
    return rag


def _sample(trace_id: str) -> Sample:
    return Sample(question_id=trace_id, question="?", metadata={"trace": {"trace_id": trace_id}})


async def _answers(rag, trace_ids):
    queries: list[str] = []
    engine = rag.lookup.store.engine
    event.listen(engine, "before_cursor_execute", lambda *a: queries.append(a[2]) if "trace_spans" in a[2] else None)
    try:
        first = await asyncio.gather(*(rag.answer(_sample(t)) for t in trace_ids), return_exceptions=True)
        later = await rag.answer(_sample(tid(4)))
    finally:
        await rag.aclose()
    return first, later, len(queries)


def test_concurrent_answers_are_read_in_one_query_each_with_its_own_trace(replay):
    ids = [tid(3), tid(1), "f" * 32, tid(9), tid(2), tid(1)]
    first, later, queries = asyncio.run(_answers(replay, ids))
    assert [getattr(o, "answer", None) for o in first] == ["answer 3", "answer 1", None, None, "answer 2", "answer 1"]
    assert isinstance(first[2], LookupError) and "is not in the traces store" in str(first[2])
    assert isinstance(first[3], LookupError) and "cannot be mapped: no answer" in str(first[3])
    assert first[1].trace["trace_id"] == tid(1) and first[0].latency_s == 0.9
    assert later.answer == "answer 4"
    assert queries == 2  # the six concurrent samples together, then the later one


def test_a_cancelled_sample_does_not_stop_the_others(replay):
    async def scenario():
        waiting = asyncio.ensure_future(replay.answer(_sample(tid(1))))
        other = asyncio.ensure_future(replay.answer(_sample(tid(2))))
        await asyncio.sleep(0)  # both wait for the read
        waiting.cancel()
        try:
            return await other
        finally:
            await replay.aclose()

    assert asyncio.run(scenario()).answer == "answer 2"
