"""``--from-folder``: OTLP files put into a folder while the watch runs are imported at its next look and scored
once; a file that cannot be read yet (being written) is said once and taken when complete; a second session does
not score again what the first did."""

from __future__ import annotations

import pytest

from ragassay.cli.watch_cmd import load_statistics
from ragassay.watch import Source, StopRule, watch

from watch_streams import GOOD, project, rows, traces_file

pytest.importorskip("opentelemetry.proto")

RULES = "reference = { target = { answer_relevance_token_recall = 0.9 }, margin = 0.2 }\n"


@pytest.mark.timeout(300)
def test_files_put_into_the_folder_are_imported_and_scored_once(tmp_path):
    watched = project(tmp_path, RULES)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    lines: list[str] = []
    source = Source(folder=inbox)
    assert watch(watched, load_statistics(), source=source, stop=StopRule(seconds=0), say=lines.append).count == 0
    traces_file(inbox / "a.jsonl", range(1, 6), "1", GOOD)
    first = watch(watched, load_statistics(), source=source, stop=StopRule(traces=5), say=lines.append)
    assert first.decided == {"scored": 5}
    traces_file(inbox / "b.jsonl", range(6, 9), "1", GOOD)
    partial = inbox / "c.jsonl"
    full = traces_file(tmp_path / "c.jsonl", range(9, 11), "1", GOOD).read_text()
    partial.write_text(full[: len(full) // 3], encoding="utf-8")  # still being written
    second = watch(watched, load_statistics(), source=source, stop=StopRule(traces=3), say=lines.append)
    assert second.resumed and second.decided == {"scored": 3}
    said = [line for line in lines if "c.jsonl" in line]
    assert len(said) == 1 and "not imported yet" in said[0]
    partial.write_text(full, encoding="utf-8")
    third = watch(watched, load_statistics(), source=source, stop=StopRule(traces=2), say=lines.append)
    assert third.decided == {"scored": 2}
    scored = rows(tmp_path, "SELECT trace_id FROM watch_traces WHERE status = 'scored'")
    assert len(scored) == len(set(scored)) == 10
    outputs = rows(tmp_path, "SELECT question_id FROM outputs")
    assert sorted(outputs) == sorted(scored)


def test_a_missing_folder_is_one_clear_error(tmp_path):
    from ragassay.errors import DatasetError

    watched = project(tmp_path, RULES)
    with pytest.raises(DatasetError, match="no such folder"):
        watch(watched, load_statistics(), source=Source(folder=tmp_path / "nope"), stop=StopRule(traces=1))
