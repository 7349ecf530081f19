"""``traces_read``: within it a TraceLookup of the same store and mapping takes the traces just read instead of
reading them again (the watch hands trace_replay what it read); another mapping or store, or outside it, reads."""

from __future__ import annotations

import pytest

from ragassay.traces.ingest import import_paths
from ragassay.traces.mapping import TraceMapping
from ragassay.traces.reading import TraceLookup, traces_read

from watch_streams import GOOD, project, traces_file

pytest.importorskip("opentelemetry.proto")


def test_a_lookup_takes_the_traces_read_in_the_block_and_only_those(tmp_path):
    watched = project(tmp_path, "")
    store = watched.open_store()
    (tmp_path / "other").mkdir()
    other = project(tmp_path / "other", "")
    try:
        import_paths(store, [traces_file(tmp_path / "t.jsonl", range(1, 4), "1", GOOD)])
        mapping = TraceMapping()
        lookup = TraceLookup(watched, mapping=mapping)  # opens a store of its own
        read = lookup.lookup([f"{n:032x}".replace("0", "a", 1) for n in (1, 2, 3)])
        assert len(read) == 3
        first_id = sorted(read)[0]
        held = {first_id: read[first_id]}
        with traces_read(store, mapping, held):
            again = lookup.lookup(sorted(read))
            assert again[first_id] is held[first_id]  # taken, not read again
            assert all(again[t] is not read[t] for t in sorted(read)[1:])  # the others read from the store
            assert again == read
            other_mapping = TraceMapping(question_keys=["input.value"])
            assert other_mapping != mapping
            separate = TraceLookup(watched, mapping=other_mapping)
            assert separate.lookup([first_id])[first_id] is not held[first_id]
            separate.close()
            elsewhere_store = other.open_store(create=True)
            assert TraceLookup(elsewhere_store).lookup([first_id]) == {}  # another store: nothing taken from here
            elsewhere_store.close()
        assert lookup.lookup([first_id])[first_id] is not held[first_id]
        lookup.close()
    finally:
        store.close()
