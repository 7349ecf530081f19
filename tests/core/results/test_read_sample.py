"""read_sample (one sample of a run, a few indexed statements) against read_run (the whole run), and the run
version a reader may keep things for (ResultsStore.run_version)."""

from __future__ import annotations

import pytest

from ragassay.errors import StoreError
from ragassay.results import read_payloads, read_run, read_sample

from html_report_helpers import write_planted_run


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    store, run_id = write_planted_run(tmp_path_factory.mktemp("read-sample") / "results.db")
    yield store, run_id
    store.close()


def test_read_sample_equals_the_whole_run_for_that_sample(planted):
    store, run_id = planted
    whole, (one, payloads) = read_run(store, run_id), read_sample(store, run_id[:7], "q05")
    assert one.info == whole.info and one.systems == whole.systems and one.system_specs == whole.system_specs
    assert one.question_ids == ["q05"] and one.sample_json == [whole.sample_json[whole.position["q05"]]]
    assert {k: v for k, v in whole.outputs.items() if k[1] == "q05"} == one.outputs
    table = whole.score_table
    expected = sorted(map(repr, table.rows(table.sample == whole.position["q05"])))
    assert sorted(repr(r) for r in one.score_table.rows(one.score_table.sample == 0)) == expected and expected
    assert payloads == read_payloads(store, run_id, ["q05"]) and len(payloads) == 2
    with pytest.raises(StoreError, match="no sample 'q99'"):
        read_sample(store, run_id, "q99")


def test_run_version_names_the_run_and_refuses_an_unknown_one(planted):
    store, run_id = planted
    found, version = store.run_version(run_id[:5])
    assert found == run_id and version == store.run_version(run_id)[1]
    # outputs, largest output id, metric values, judgements, no lease
    assert version[3] == 24 and version[4] > 0 and version[5:] == (48, 24, None)
    with pytest.raises(StoreError, match="not found"):
        store.run_version("nosuchrun")
