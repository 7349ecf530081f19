"""Re-derive instances.jsonl from RAGChecker's meta-evaluation files (for the record; README.md says what and why).

    python tests/data/ragchecker_meta/derive.py FOLDER [OUT]

FOLDER holds ``human_labeled_data.json`` and ``baseline_ragchecker.json`` of amazon-science/RAGChecker,
``data/meta_evaluation/`` (commit 6091f08c00e676e87a970f2aeb4a23a484746348); OUT defaults to instances.jsonl
beside this script. The script checks that the two files describe the same 280 instances in the same order,
that each instance has exactly two human records, and that RAGChecker's overall value is the harmonic mean of
its correctness and completeness values (so they are its precision, recall and F1), and stops on any mismatch.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

#: RAGChecker's keys in baseline_ragchecker.json -> the names of its metrics they hold (paper, Table 2).
METRICS = {"correctness_label": "precision", "completeness_label": "recall", "overall_label": "f1"}
#: The human file's label keys -> the short names kept.
LABELS = {"correctness_label": "correctness", "completeness_label": "completeness", "overall_label": "overall"}


def response_digest(text: str) -> str:
    """sha256 of a response's UTF-8 text, hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def side(model: dict) -> dict:
    """One RAG system's side of an instance: its name, its response's digest, RAGChecker's three values."""
    values = {METRICS[key]: float(model["ragchecker"][key]) for key in METRICS}
    p, r, f1 = values["precision"], values["recall"], values["f1"]
    assert math.isclose(f1, 0.0 if p + r == 0 else 2 * p * r / (p + r), abs_tol=1e-12), (model["model_name"], values)
    return {"name": model["model_name"], "response_sha256": response_digest(model["response"]), "ragchecker": values}


def derive(baseline: list[dict], human: list[dict]) -> list[dict]:
    """One compact record per instance (README.md, 'Layout')."""
    assert len(baseline) == 280 and len(human) == 2 * len(baseline), (len(baseline), len(human))
    records = []
    for index, item in enumerate(baseline):
        people = human[2 * index : 2 * index + 2]
        for person in people:
            for key in ("instance_id", "dataset", "query_id", "query"):
                assert person[key] == item[key], (index, key)
            for model in ("model1", "model2"):
                assert person[model]["model_name"] == item[model]["model_name"], (index, model)
                assert person[model]["response"] == item[model]["response"], (index, model)
        records.append(
            {
                "instance_id": item["instance_id"],
                "dataset": item["dataset"],
                "query_id": item["query_id"],
                "query": item["query"],
                "model1": side(item["model1"]),
                "model2": side(item["model2"]),
                "labels": [{LABELS[key]: int(person[key]) for key in LABELS} for person in people],
            }
        )
    return records


def main(folder: str, out: str | None = None) -> None:
    source = Path(folder)
    baseline = json.loads((source / "baseline_ragchecker.json").read_text(encoding="utf-8"))
    human = json.loads((source / "human_labeled_data.json").read_text(encoding="utf-8"))
    target = Path(out) if out else Path(__file__).with_name("instances.jsonl")
    with target.open("w", encoding="utf-8") as handle:
        for record in derive(baseline, human):
            handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main(*sys.argv[1:])
