"""ATIF trajectory files scored end to end: the ``atif`` source asks each file's question and ``atif_replay``
answers with its recorded trajectory, which reads back from the stored run field-equal to the hand-written one;
a dataset of one's own is answered by trajectory id; bad folders and duplicate ids are one clear error."""

from __future__ import annotations

import json
import textwrap

import pytest

import ragassay
from ragassay import ConfigError, DatasetError, TokenUsage

from conftest import ragassay_cli
from trace_runs import read
from trajectory_fixtures import ANSWER, QUESTION, atif_document, atif_expected

CONFIG = """
[dataset]
source = "atif"
options = { path = "trajectories" }
[systems.agent]
rag = "atif_replay"
[evaluation]
metrics = ["answer_relevance_token_recall"]
"""


def _files(root, *documents):
    folder = root / "trajectories"
    (folder / "day1").mkdir(parents=True)
    for n, document in enumerate(documents):
        (folder / "day1" / f"t{n}.json").write_text(json.dumps(document), encoding="utf-8")
    return folder


def test_atif_files_become_a_scored_run_whose_outputs_carry_the_trajectories(tmp_path):
    bare = {"schema_version": "ATIF-v1.0", "agent": {"name": "a", "version": "2"}, "steps": [
        {"step_id": 1, "source": "user", "message": "Who?"}, {"step_id": 2, "source": "agent", "message": "Me."}]}  # fmt: skip
    _files(tmp_path, atif_document("run-1"), atif_document("run-2", "And the second project?"), bare)
    (tmp_path / "ragassay.toml").write_text(CONFIG)
    run = read(tmp_path, ragassay.run(tmp_path).run_id, payloads=True)
    assert [s.question_id for s in run.samples] == ["run-1-main", "run-2-main", "day1/t2"]
    assert [s.question for s in run.samples] == [QUESTION, "And the second project?", "Who?"]
    assert run.samples[2].metadata["atif"] == {
        "trajectory_id": "", "session_id": "", "agent": "a", "schema_version": "ATIF-v1.0", "file": "day1/t2.json"
    }  # fmt: skip
    for n in (1, 2):
        output = run.payload("agent", f"run-{n}-main")
        assert output.trajectory == atif_expected(f"run-{n}")
        assert (output.answer, output.latency_s) == (ANSWER, 9.0)  # the recorded latency, not the replay's
        assert output.usage == TokenUsage(input_tokens=360, output_tokens=50, cached_tokens=20, calls=3)
        assert output.trace["atif"]["skipped"] == {"system": 1, "user": 2}
    assert [s.kind for s in run.payload("agent", "day1/t2").trajectory] == ["model_call", "answer"]
    recall = run.values("agent", "answer_relevance_token_recall")
    assert len(recall) == 3 and all(0.0 <= v <= 1.0 for v in recall)


def test_a_dataset_of_ones_own_is_answered_by_trajectory_id(tmp_path):
    _files(tmp_path, atif_document("run-1"), atif_document("run-7"))
    rows = [{"question_id": "run-1-main", "question": QUESTION, "reference_answers": [ANSWER]},
            {"question_id": "run-9", "question": "?", "reference_answers": ["x"]}]  # fmt: skip
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "ragassay.toml").write_text(
        textwrap.dedent("""
        [dataset]
        options = { path = "qa.jsonl" }
        [systems.agent]
        rag = { name = "atif_replay", options = { path = "trajectories" } }
        [evaluation]
        metrics = ["exact_match"]
        """)
    )
    summary = ragassay.run(tmp_path)
    assert any("1 ATIF trajectory file(s) match no sample: run-7-main" in w for w in summary.warnings)
    run = read(tmp_path, summary.run_id, payloads=True)
    assert run.payload("agent", "run-1-main").trajectory == atif_expected("run-1")
    assert run.status("agent", "run-9") == "failed"
    assert "no ATIF trajectory with id 'run-9'" in run.output("agent", "run-9").error
    assert list(run.values("agent", "exact_match"))[0] == 1.0


def test_atif_replay_without_a_path_outside_an_atif_dataset_is_a_config_error(tmp_path):
    (tmp_path / "qa.jsonl").write_text(
        json.dumps({"question_id": "q", "question": "?", "reference_answers": ["a"]}) + "\n"
    )
    (tmp_path / "ragassay.toml").write_text(
        '[dataset]\noptions = { path = "qa.jsonl" }\n[systems.agent]\nrag = "atif_replay"\n'
        '[evaluation]\nmetrics = ["exact_match"]\n'
    )
    with pytest.raises(ConfigError, match="atif_replay: set options.path"):
        ragassay.run(tmp_path)


@pytest.mark.parametrize(
    ("documents", "message"),
    [
        ((atif_document("run-1"), atif_document("run-1")), "trajectory id 'run-1-main' is also the id of"),
        (({"agent": {}, "steps": [{"step_id": 1, "source": "agent", "message": "hi"}]},), "no user step"),
        ((), "holds no *.json ATIF trajectory file"),
    ],
)
def test_bad_trajectory_folders_are_one_clear_error(tmp_path, documents, message):
    _files(tmp_path, *documents)
    (tmp_path / "ragassay.toml").write_text(CONFIG)
    with pytest.raises(DatasetError) as caught:
        ragassay.run(tmp_path)
    assert message in str(caught.value)


def test_the_cli_reports_a_malformed_file_without_a_traceback(tmp_path):
    folder = _files(tmp_path)
    (folder / "broken.json").write_text('{"steps": "no"}')
    (tmp_path / "ragassay.toml").write_text(CONFIG)
    result = ragassay_cli("run", str(tmp_path), "-q")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "broken.json: no 'steps' array" in result.stderr
