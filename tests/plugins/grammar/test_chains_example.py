"""examples/aurp/conversations.toml: chains from aurp, three conversational systems, turn_blame per turn."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import ragassay

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"


def test_conversations_example_runs_and_blames_every_turn(tmp_path):
    folder = tmp_path / "aurp"
    folder.mkdir()
    for name in ("aurp.sql", "templates.yaml", "conversations.toml"):
        shutil.copy(AURP / name, folder / name)
    shutil.copytree(AURP / "corpus", folder / "corpus")
    run = ragassay.run(folder / "conversations.toml")
    assert run.failed == 0
    frames = ragassay.load_run(run.run_id, config=folder / "conversations.toml")
    samples = frames.samples
    assert len({qid.split("::")[0] for qid in samples.index}) == 40
    unanswerable = int((samples["turn_kind"] == "unanswerable").sum())
    for warning in run.warnings:  # only the honest ones: unanswerable turns have no reference, some retrieve nothing
        assert f"unscored on {unanswerable} of {len(samples)} samples" in warning or "no retrieved context" in warning
    blame = frames.metrics[frames.metrics["metric"] == "turn_blame"]
    assert blame["unscored_reason"].isna().all() and len(blame) == 3 * len(samples)
    last_turn = blame[blame["system"] == "last_turn"]
    classes = Counter(d["blame"] for d in last_turn["details"])
    assert {"ok", "retrieval", "context_loss", "generation", "answered_unanswerable"} <= set(classes)
    # last_turn retrieves with the turn as it stands: a turn resolved only by the history is never 'retrieval'
    depends = samples["metadata.chain.depends_on_history"]
    for question_id, details in zip(last_turn["question_id"], last_turn["details"]):
        if depends[question_id]:
            assert details["blame"] != "retrieval", question_id
    assert classes["context_loss"] > classes["retrieval"]
