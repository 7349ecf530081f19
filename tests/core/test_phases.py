"""Progress of long phases and warnings reported through ComponentContext, and what a run does with them."""

from __future__ import annotations

import dataclasses
import json
import pickle

import pytest

import ragassay
from ragassay import Chunk, ComponentContext, Corpus, Document, PhaseProgress, Retriever, ScoredChunk
from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.plugin_manager import load_plugins

from conftest import BASIC_CONFIG, write_project


def observed(context: ComponentContext) -> tuple[list[PhaseProgress], list[str]]:
    events, warnings = [], []
    context.observe(events.append, warnings.append)
    return events, warnings


def test_progress_and_warnings_reach_the_observers_once_per_message():
    context = ComponentContext()
    events, warnings = observed(context)
    context.progress("corpus embedding", 0, 10, "chunks")
    context.progress("corpus embedding", 10, 10, "chunks", note="cache hit")
    context.warn("most chunks were truncated")
    context.warn("most chunks were truncated")
    assert [(e.done, e.finished, e.note) for e in events] == [(0, False, ""), (10, True, "cache hit")]
    assert warnings == ["most chunks were truncated"] and context.warnings == warnings


def test_a_failing_observer_does_not_fail_the_component(caplog):
    context = ComponentContext()

    def broken(event):
        raise RuntimeError("display gone")

    context.observe(broken)
    context.progress("chunking", 1, 2)  # no exception
    assert "progress observer" in caplog.text


def test_observers_and_shared_objects_stay_in_this_process():
    context = ComponentContext(settings={"x": 1})
    context.observe(print, print)
    made = context.shared("key", object)
    assert context.shared("key", object) is made
    copied = pickle.loads(pickle.dumps(context))  # e.g. sent to a Ray worker
    replaced = dataclasses.replace(context, warnings=[])
    for other in (copied, replaced):
        assert other.settings == {"x": 1}
        assert other.runtime.progress_observers == [] and other.shared("key", dict) == {}


class Toy(Retriever):
    """Keeps the chunks (a retriever that reports nothing itself)."""

    name = "toy"

    def index(self, chunks):
        if any(c.text == "boom" for c in chunks):
            raise ValueError("cannot index")
        self.chunks = list(chunks)

    def retrieve(self, query, k):
        return [ScoredChunk(chunk=c, score=1.0, rank=i + 1) for i, c in enumerate(self.chunks[:k])]


class Child(Toy):
    """Calls the parent's index: one phase all the same."""

    name = "child"

    def index(self, chunks):
        super().index(chunks)


def chunks(*texts):
    return [Chunk(id=f"c{i}", document_id=f"d{i}", text=t) for i, t in enumerate(texts)]


@pytest.mark.parametrize("cls", [Toy, Child])
def test_every_retriever_reports_its_index_phase(cls):
    context = ComponentContext()
    events, _ = observed(context)
    cls(context=context).index(iter(chunks("a", "b", "c")))  # an iterator is counted too
    assert [(e.phase, e.done, e.total, e.unit) for e in events] == [
        (f"index ({cls.name})", 0, 3, "chunks"),
        (f"index ({cls.name})", 3, 3, "chunks"),
    ]


def test_a_failed_index_ends_its_phase_with_a_note():
    context = ComponentContext()
    events, _ = observed(context)
    with pytest.raises(ValueError):
        Toy(context=context).index(chunks("a", "boom"))
    assert events[-1].finished and events[-1].note == "failed"


def test_chunking_is_reported_in_documents():
    context = ComponentContext(registry=load_plugins().registry)
    events, _ = observed(context)
    chunker = context.build("chunker", "recursive")
    corpus = Corpus([Document(id=f"d{i}", text=f"document number {i}.") for i in range(250)])
    assert len(corpus.chunks(chunker)) == 250
    assert {e.phase for e in events} == {"chunking"} and events[0].done == 0 and events[-1].finished
    assert 3 <= len(events) <= 102 and [e.done for e in events] == sorted(e.done for e in events)
    corpus.chunks(chunker)  # memoised: nothing done, nothing reported
    assert {e.phase for e in events} == {"chunking"} and len(events) == len({e.done for e in events})


def test_a_run_reports_its_build_phases_and_stores_warnings(tmp_path):
    small = BASIC_CONFIG.replace('paths = ["corpus/*"]', 'paths = ["corpus/*"]\n    max_document_bytes = 10')
    config = write_project(tmp_path, small)  # every document is "large": a warning each
    events, warnings = [], []
    run = ragassay.run(config, on_progress=events.append, on_warning=warnings.append)
    phases = [e.phase for e in events]
    assert phases[0] == "building systems" and events[-1].phase == "building systems" and events[-1].finished
    assert "chunking" in phases and "index (keyword)" in phases
    assert warnings and all(w in run.warnings for w in warnings)
    store = Project(load_config(config)).open_store()
    try:
        stored = json.loads(store.get_run(run.run_id)["warnings_json"])
    finally:
        store.close()
    assert all(w in stored for w in warnings)
