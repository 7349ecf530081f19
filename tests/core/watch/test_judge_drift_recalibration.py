"""Judge drift: when the judge behind a watched column changes between sessions, the new one is run on the
calibration slice (the last K traces the old one scored, stored as a run of its own), the column's detector
restarts instead of alarming on the change, and the session says so; an unchanged judge is left alone."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragassay.cli.watch_cmd import load_statistics as statistics
from ragassay.engine.project import Project
from ragassay.traces.ingest import import_paths
from ragassay.watch import StopRule, watch

from otlp_traces import openinference_trace, request
from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

CONFIG = """
[project]
name = "drifting"

[watch]
metrics = [{{ name = "answer_relevancy", options = {{ generator = {{ name = "openai", options = {{ model = "{model}", base_url = "{url}/v1" }} }} }} }}]
quiet_s = 0
poll_s = 0.05
calibration = 3
reference = {{ target = {{ answer_relevancy = 0.5 }} }}
"""


def _reply(request):
    return Turn(text=json.dumps({"feedback": "Fine.", "subject_matter": 1, "focus": 0}), usage=(50, 10, 0))


@pytest.mark.timeout(300)
def test_a_changed_judge_is_recalibrated_on_the_last_scored_traces_not_alarmed_on(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-watch-drift")
    lines: list[str] = []
    with OpenAIChatServer() as server:
        server.default = _reply

        def session(model: str, stop: StopRule):
            (tmp_path / "ragassay.toml").write_text(CONFIG.format(model=model, url=server.url), encoding="utf-8")
            return watch(Project.load(tmp_path), statistics(), stop=stop, say=lines.append)

        session("judge-a", StopRule(seconds=0))
        requests = [json.dumps(request(openinference_trace(n, f"What is river {n}?", f"River {n}."))) for n in range(5)]
        (tmp_path / "t.jsonl").write_text("\n".join(requests) + "\n", encoding="utf-8")
        store = Project.load(tmp_path).open_store()
        import_paths(store, [tmp_path / "t.jsonl"])
        store.close()
        first = session("judge-a", StopRule(traces=5))
        assert first.decided == {"scored": 5} and server.calls == 5
        changed = session("judge-b", StopRule(seconds=0))
        assert server.calls == 5 + 3  # the calibration slice, re-scored by the new judge
        same = session("judge-b", StopRule(seconds=0))
    assert len(changed.notes) == 1 and "judge drift: answer_relevancy changed" in changed.notes[0]
    assert "last 3 scored trace(s)" in changed.notes[0] and changed.alarms == []
    assert changed.notes[0] in lines and same.notes == []
    with sqlite3.connect(tmp_path / "ragassay-results.db") as db:
        runs = db.execute("SELECT id, description, sample_count FROM runs ORDER BY created_at").fetchall()
        calibration = [run for run in runs if "calibration" in (run[1] or "")]
        assert len(calibration) == 1 and calibration[0][2] == 3
        values = db.execute(
            "SELECT count(*) FROM metric_values m JOIN outputs o ON o.id = m.output_id WHERE o.run_id = ?",
            (calibration[0][0],),
        ).fetchall()
        spec = json.loads(db.execute("SELECT spec_json FROM runs WHERE id = ?", (first.run_id,)).fetchone()[0])
    assert values == [(3,)]
    assert "judge-b" in json.dumps(spec["metrics"]["answer_relevancy"])
