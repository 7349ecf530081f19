"""``ragassay labels export/import``: a round trip through JSONL, an idempotent import, and errors that name the
file and line of a bad label (not JSON, a field missing, a value off the rubric's scale, an unknown rubric, a
sample of another run)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from ragassay.errors import ConfigError, DatasetError
from ragassay.labels import Label, load_rubric, read_jsonl
from ragassay.store import open_store

from labels_helpers import RUN_ID, SYSTEMS, open_label_store, with_stored_digest, write_label_run


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


def _labels() -> list[Label]:
    common = {"run_id": RUN_ID, "rubric_version": 1}
    return [
        Label(
            **common, sample_id="q00", system=SYSTEMS[0], rubric="correct", annotator="ann", value=1, labelled_at=1.5
        ),
        Label(**common, sample_id="q01", system=SYSTEMS[1], rubric="faithful", annotator="bob", value=4, labelled_at=2),
        Label(
            **common,
            sample_id="q02",
            systems=(SYSTEMS[1], SYSTEMS[0]),
            rubric="preference",
            annotator="ann",
            value=-2,
            labelled_at=3,
        ),
    ]


def test_export_then_import_into_another_store_round_trips_and_a_second_import_adds_nothing(tmp_path):
    source = open_label_store(tmp_path / "a" / "results.db", samples=4)
    source.add_labels(_labels())
    source.close()
    out = tmp_path / "labels.jsonl"
    result = invoke("labels", "export", RUN_ID[:8], "--db", str(tmp_path / "a" / "results.db"), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "wrote 3 label(s)" in result.output
    lines = out.read_text().splitlines()
    expected = [with_stored_digest(label) for label in _labels()]  # the store fills in what each label judged
    assert [Label.model_validate_json(line) for line in lines] == sorted(expected, key=lambda x: x.run_id + x.rubric)

    target = open_label_store(tmp_path / "b" / "results.db", samples=4)
    target.close()
    db = str(tmp_path / "b" / "results.db")
    result = invoke("labels", "import", str(out), "--db", db)
    assert result.exit_code == 0, result.output
    assert "imported 3 label(s)" in result.output
    again = invoke("labels", "import", str(out), "--db", db)
    assert "imported 0 label(s)" in again.output and "3 were already stored" in again.output
    store = open_store(f"sqlite:///{db}")
    try:
        assert sorted(store.labels(RUN_ID), key=lambda x: x.labelled_at) == expected
    finally:
        store.close()


def _write(path, *objects) -> None:
    path.write_text("\n".join(o if isinstance(o, str) else json.dumps(o) for o in objects) + "\n")


GOOD = json.loads(_labels()[0].model_dump_json())
RUBRICS = {name: load_rubric(name) for name in ("correct", "faithful", "preference")}


@pytest.mark.parametrize(
    "bad, message",
    [
        ("{not json", r"f.jsonl:2: invalid JSON at column 2: expected a key in double quotes"),
        ({**GOOD, "value": None}, r"f.jsonl:2: not a label \(value: "),
        ({k: v for k, v in GOOD.items() if k != "annotator"}, r"f.jsonl:2: not a label \(annotator: Field required"),
        ({**GOOD, "value": 0.5}, r"f.jsonl:2: 0.5 is not a value of rubric 'correct' \(its values: 0, 1\)"),
        ({**GOOD, "rubric": "tone"}, r"f.jsonl:2: unknown rubric 'tone'.*--rubric FILE"),
        ({**GOOD, "rubric_version": 2}, r"f.jsonl:2: .*version 2, but the rubric is version 1"),
        (
            {**GOOD, "rubric": "preference", "value": 1},
            r"f.jsonl:2: a label of the pairwise rubric 'preference' names systems",
        ),
        ({**GOOD, "systems": SYSTEMS}, r"f.jsonl:2: not a label .*exactly one of system"),
    ],
)
def test_a_bad_line_is_named_with_what_is_wrong(tmp_path, bad, message):
    path = tmp_path / "f.jsonl"
    _write(path, GOOD, bad)
    with pytest.raises(DatasetError, match=message):
        read_jsonl(path, RUBRICS)


def test_import_refuses_a_label_of_a_sample_the_run_does_not_have_and_stores_none(tmp_path):
    store = open_label_store(tmp_path / "results.db", samples=4)
    write_label_run(store, "otherrun-0002", samples=8)
    path = tmp_path / "f.jsonl"
    _write(path, GOOD, "", {**GOOD, "sample_id": "q06"})
    result = invoke("labels", "import", str(path), "--db", str(tmp_path / "results.db"))
    assert result.exit_code == 2
    assert "f.jsonl:3: run labelrun-000 has no sample 'q06'" in result.output
    assert store.labels(RUN_ID) == []
    store.close()


def test_a_custom_rubric_file_is_loaded_and_checked(tmp_path):
    path = tmp_path / "tone.toml"
    path.write_text(
        'name = "tone"\nversion = 2\nkind = "ordinal"\nprompt = "Polite?"\nvalues = [1, 2, 3]\n'
        'labels = ["rude", "plain", "kind"]\ndescriptions = ["a", "b", "c"]\n'
    )
    rubric = load_rubric(path)
    assert (rubric.name, rubric.version, rubric.values, rubric.label_of(3)) == ("tone", 2, [1, 2, 3], "kind")
    path.write_text(path.read_text().replace("[1, 2, 3]", "[3, 2, 1]"))
    with pytest.raises(ConfigError, match=r"tone.toml is invalid: .*values must increase"):
        load_rubric(path)
    with pytest.raises(ConfigError, match="neither a shipped rubric"):
        load_rubric(tmp_path / "missing.toml")
