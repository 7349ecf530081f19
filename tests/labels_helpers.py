"""A stored run to label: 2 systems x 24 samples with a judge, secret system names and judge texts (so a test
can check the labelling pages never show them), and a planted <script> in one system's answers."""

from __future__ import annotations

import json
from pathlib import Path

from ragassay.models import Judgement, RAGOutput, Sample
from ragassay.store import open_store, store_url
from ragassay.store.database import UnitResult

RUN_ID = "labelrun-0001"
OTHER_RUN_ID = "otherrun-0002"
SYSTEMS = ("system-alpha-secret", "system-beta-secret")
SAMPLES = 24
PLANT = "<script>alert(1)</script>"
VERDICT_TEXT = "JUDGE-SAYS-"  # every judge explanation starts with it


def open_label_store(path: Path, samples: int = SAMPLES):
    """A SQLite store at ``path`` holding the run :data:`RUN_ID`; returns it open."""
    store = open_store(store_url(str(path), path.parent))
    write_label_run(store, RUN_ID, samples)
    return store


def write_label_run(store, run_id: str = RUN_ID, samples: int = SAMPLES, changed=(), score=None) -> str:
    """Write the run ``run_id`` into an open store; returns its id. ``changed``: (system index, sample index) of
    answers given other text than :func:`answer_text` (a later run whose system answers differently there);
    ``score(k, i)``: the judge's score of system k's answer to sample i (default 1 or 0, its verdict)."""
    items = [
        Sample(question_id=f"q{i:02d}", question=f"What is fact number {i}?", reference_answers=[f"fact {i}"])
        for i in range(samples)
    ]
    spec = {"metrics": {}, "judges": {"match": {}}}
    store.create_run(
        {
            "id": run_id,
            "fingerprint": run_id,
            "project": f"labels {PLANT}",
            "config_path": "x",
            "config_json": "{}",
            "spec_json": json.dumps(spec),
            "ragassay_version": "0",
            "sample_count": samples,
        },
        [(name, "{}") for name in SYSTEMS],
        items,
    )
    store.write_units(
        run_id,
        [
            _unit(k, system, sample, i, (k, i) in changed, None if score is None else score(k, i))
            for k, system in enumerate(SYSTEMS)
            for i, sample in enumerate(items)
        ],
    )
    store.finish_run(run_id, "complete", [])
    return run_id


def judge_says_correct(k: int, i: int) -> bool:
    """The stored judge's verdict on system ``k``'s answer to sample ``i``."""
    return (i + k) % 3 != 0


def answer_text(k: int, i: int) -> str:
    """The stored answer of system ``k`` to sample ``i``."""
    answer = f"Answer {i} of the {'first' if k == 0 else 'second'} kind."
    return answer + f" Planted {PLANT}" if k == 1 and i % 4 == 0 else answer


def with_stored_digest(label):
    """``label`` with the digest of the stored answer(s) it names (what the store fills in)."""
    from ragassay.labels.digest import label_digest

    digest = label_digest(label, lambda system, sample: answer_text(SYSTEMS.index(system), int(sample[1:])))
    return label.model_copy(update={"output_digest": digest})


def _unit(k: int, system: str, sample: Sample, i: int, changed: bool = False, score=None) -> UnitResult:
    answer = answer_text(k, i) + (" Revised." if changed else "")
    output = RAGOutput(answer=answer, contexts=[f"Context {i}: fact {i} is true.", "Unrelated text."])
    correct = judge_says_correct(k, i)
    judgement = Judgement(
        judge="match",
        verdict="correct" if correct else "incorrect",
        score=(1.0 if correct else 0.0) if score is None else score,
        explanation=f"{VERDICT_TEXT}{'yes' if correct else 'no'}",
    )
    return UnitResult(system, sample.question_id, "ok", output, judgements=[judgement])
