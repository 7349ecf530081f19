"""``ragassay traces import``: the counts, and the mapping check of the traces in the files imported (every stored
trace with ``--check-all``)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from ragassay.cli.main import cli

from otlp_traces import openinference_trace, request, sid, span, tid

CONFIG = '[dataset]\nsource = "traces"\n[systems.prod]\nrag = "trace_replay"\n[evaluation]\nmetrics = ["k_precision"]\n'


def _import(project, path, *flags):
    result = CliRunner().invoke(cli, ["traces", "import", str(path), "-c", str(project), *flags])
    assert result.exit_code == 0, result.output
    return result


def test_an_import_maps_the_traces_it_brought_and_check_all_maps_every_stored_one(tmp_path):
    (tmp_path / "ragassay.toml").write_text(CONFIG)
    no_answer = [span(tid(9), sid(9, 1), None, "root", {"input.value": "q?"})]
    (tmp_path / "first.json").write_text(json.dumps(request(no_answer + openinference_trace(1, "A?", "a"))))
    (tmp_path / "second.json").write_text(json.dumps(request(openinference_trace(2, "B?", "b"))))

    first = json.loads(_import(tmp_path, tmp_path / "first.json", "--json").stdout)
    assert (first["mappable"], first["unmappable"], first["checked"]) == (1, 1, "imported")
    assert first["unmappable_traces"][0]["trace_id"] == tid(9)

    second = json.loads(_import(tmp_path, tmp_path / "second.json", "--json").stdout)
    assert (second["mappable"], second["unmappable"], second["traces_stored"]) == (1, 0, 3)  # trace 9 not again

    again = json.loads(_import(tmp_path, tmp_path / "second.json", "--check-all", "--json").stdout)
    assert (again["mappable"], again["unmappable"], again["checked"]) == (2, 1, "stored")

    text = _import(tmp_path, tmp_path / "first.json")
    assert "mapping: 1 trace(s) map to a question and an answer (checked: the traces in these files)" in text.output
    assert "1 stored trace(s) cannot be mapped" in text.output and tid(9) in text.output


def test_a_trace_completed_by_a_later_import_is_mapped_whole(tmp_path):
    (tmp_path / "ragassay.toml").write_text(CONFIG)
    spans = openinference_trace(3, "C?", "c")
    root, children = spans[0], spans[1:]
    (tmp_path / "children.json").write_text(json.dumps(request(children)))
    (tmp_path / "root.json").write_text(json.dumps(request([root])))
    before = json.loads(_import(tmp_path, tmp_path / "children.json", "--json").stdout)
    assert (before["mappable"], before["unmappable"]) == (0, 1)  # its root span has not arrived yet
    after = json.loads(_import(tmp_path, tmp_path / "root.json", "--json").stdout)
    assert (after["mappable"], after["unmappable"]) == (1, 0)  # the root and the children stored before


def test_a_bad_mapping_in_the_project_is_one_clear_error_before_anything_is_stored(tmp_path):
    config = CONFIG.replace('source = "traces"', 'source = "traces"\noptions = { mapping = { answer_key = "x" } }')
    (tmp_path / "ragassay.toml").write_text(config)
    (tmp_path / "t.json").write_text(json.dumps(request(openinference_trace(1, "A?", "a"))))
    result = CliRunner().invoke(cli, ["traces", "import", str(tmp_path / "t.json"), "-c", str(tmp_path)])
    assert result.exit_code == 2
    assert "dataset.options.mapping: answer_key: Extra inputs are not permitted" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "ragassay-results.db").exists()
