"""The read model's run headers (``read_run_headers``: every run without its samples, outputs or scores), its
labels reader, and the column names it shares with the store."""

from __future__ import annotations

import pytest
from test_read import Statements

from ragassay.results import read_labels, read_run, read_run_headers

from html_report_helpers import PLANTED_SYSTEM, SAMPLES, write_planted_run


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    store, run_id = write_planted_run(tmp_path_factory.mktemp("headers") / "results.db")
    yield store, run_id
    store.close()


def test_a_header_says_what_the_whole_run_says_without_reading_it(planted):
    store, run_id = planted
    with Statements(store.engine) as counted:
        [header] = read_run_headers(store)
    # the listing (runs with their counts, then the live leases) and the run's systems: no sample, output, score
    assert len(counted.seen) == 3
    assert not any(table in " ".join(counted.seen) for table in ("run_samples", "metric_values", "judgements"))
    whole = read_run(store, run_id)
    assert (header.id, header.project, header.state, header.state_detail) == (
        whole.info.id,
        whole.info.project,
        whole.info.state,
        whole.info.state_detail,
    )
    assert header.systems == tuple(whole.systems) == ("base", PLANTED_SYSTEM)
    assert (header.sample_count, header.expected) == (SAMPLES, 2 * SAMPLES)
    assert header.outputs == len(whole.outputs) and header.failed == sum(not o.ok for o in whole.outputs.values())
    assert (header.created_at, header.updated_at, header.config_path) == (
        whole.info.created_at,
        whole.info.updated_at,
        whole.info.config_path,
    )


def test_headers_of_an_empty_store_and_of_several_runs_newest_first(tmp_path):
    from ragassay.models import Sample
    from ragassay.store import open_store

    store = open_store(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        assert read_run_headers(store) == []
        for run_id, systems in (("older", ["a"]), ("newer", ["b", "a", "c"])):
            row = {"id": run_id, "fingerprint": run_id, "project": "p", "config_path": "c", "config_json": "{}"}
            row.update(spec_json="{}", ragassay_version="0", sample_count=1, description=f"the {run_id} one")
            store.create_run(row, [(name, "{}") for name in systems], [Sample(question_id="q", question="?")])
        headers = read_run_headers(store)
    finally:
        store.close()
    assert [(h.id, h.systems, h.description) for h in headers] == [
        ("newer", ("b", "a", "c"), "the newer one"),
        ("older", ("a",), "the older one"),
    ]
    assert [(h.outputs, h.failed, h.expected, h.state) for h in headers] == [
        (0, 0, 3, "interrupted"),
        (0, 0, 1, "interrupted"),
    ]


def test_a_store_without_labels_has_none_to_read():
    class NoLabels:
        pass

    assert read_labels(NoLabels(), "run") == []
