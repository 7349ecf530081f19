"""Reading the watches of a store: only runs with a watch spec, the newest per (project, name), the rules without
what may carry a credential, an unreadable progress said, a store without watch tables holding none."""

from __future__ import annotations

import json

from ragassay.results.watches import read_watch, read_watches


class Store:
    """A store's read side as the protocols give it: runs (newest first), each watch's progress and counts."""

    def __init__(self, runs, states):
        self.runs, self.states = runs, states

    def list_runs(self):
        return self.runs

    def watch_state(self, run_id):
        return self.states.get(run_id)

    def watch_counts(self, run_id):
        return {"scored": 3}


def _run(run_id, name=None, project="p", created=0.0):
    spec = {"metrics": {"m": {}}, "judges": {"j": {}}}
    if name is not None:
        spec["watch"] = {"name": name, "otlp_headers": {"authorization": "Bearer s3cret"}, "sinks": {"webhook": "x"}}
    return {"id": run_id, "project": project, "created_at": created, "spec_json": json.dumps(spec)}


def test_the_newest_run_of_each_watch_without_its_credentials():
    runs = [_run("new1", "prod", created=2), _run("plain"), _run("old1", "prod", created=1), _run("oth1", "prod", "q")]
    store = Store(runs, {"new1": json.dumps({"alarms": [{"metric": "m"}]}), "oth1": "{not json"})
    found = read_watches(store)
    assert [(w.run_id, w.project) for w in found] == [("new1", "p"), ("oth1", "q")]
    assert found[0].columns == ("m", "judge:j") and found[0].alarms == [{"metric": "m"}]
    assert "otlp_headers" not in found[0].rules and "sinks" not in found[0].rules and "s3cret" not in repr(found)
    assert found[1].state == {} and "not JSON" in found[1].problem
    assert read_watch(store, "prod").run_id == "new1" and read_watch(store, "prod").counts == {"scored": 3}
    assert read_watch(store, "oth").run_id == "oth1"  # a run id prefix
    assert read_watch(store, "nightly") is None


def test_a_store_without_watch_tables_holds_no_watch():
    class Plain:
        def list_runs(self):
            return [_run("r1", "prod")]

    assert read_watches(Plain()) == [] and read_watch(Plain(), "prod") is None
