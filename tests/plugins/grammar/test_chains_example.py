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
    _history_beats_last_turn_by_conversation(run.run_id, folder)
    _blame_tells_context_loss_from_retrieval(blame, depends)


def _history_beats_last_turn_by_conversation(run_id, folder):
    """The last-turn-only system is worse than the history system on turn recall, decided by the paired verdict
    that flips whole conversations, and the verdict counts turns in conversations."""
    from ragassay.analysis.verdicts import METHOD_CLUSTERED, decide
    from ragassay.results import read_run
    from ragassay.store import open_store

    store = open_store(f"sqlite:///{folder / 'conversations-results.db'}")
    try:
        run = read_run(store, run_id)
    finally:
        store.close()
    verdicts = decide(run, baseline="last_turn")
    assert verdicts.conversations == 40 and verdicts.method == METHOD_CLUSTERED
    (recall,) = [p for p in verdicts.pairs if p.metric == "recall_at_k" and p.system == "history"]
    assert recall.verdict == "better" and recall.mean_diff > 0 and recall.ci_low > 0
    assert recall.n_clusters < recall.n  # n turns in fewer conversations


def _blame_tells_context_loss_from_retrieval(blame, depends):
    """On the same turn, the last-turn system's failure is context loss where the history system's query
    carried the conversation; a turn that needs no history fails on retrieval for either query, never on context."""
    by_system = {s: dict(zip(rows["question_id"], rows["details"])) for s, rows in blame.groupby("system")}
    lost, fixed = 0, 0
    for question_id, details in by_system["last_turn"].items():
        if details["blame"] == "context_loss":
            assert depends[question_id]
            lost += 1
            fixed += by_system["history"][question_id]["blame"] in ("ok", "generation")
        if not depends[question_id]:
            assert by_system["history"][question_id]["blame"] != "context_loss"
    assert lost and fixed
