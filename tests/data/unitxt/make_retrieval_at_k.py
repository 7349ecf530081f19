"""Regenerate retrieval_at_k.jsonl: Unitxt 1.26's RetrievalAtK instance scores of the records of reference.jsonl.

Run with a Python that has ``unitxt==1.26.10`` installed (not a ragassay dependency)::

    python -m venv /tmp/unitxt && /tmp/unitxt/bin/pip install unitxt==1.26.10
    /tmp/unitxt/bin/python tests/data/unitxt/make_retrieval_at_k.py

The records (reference.jsonl) include samples without reference ids, repeated retrieved ids and references
never retrieved. Each output line holds the question id and Unitxt's ``match_at_k``, ``precision_at_k`` and
``recall_at_k`` for k in 1, 3, 5, 10, 20, 40 (catalog ``metrics.rag.end_to_end.context_correctness.retrieval_at_k``).
tests/core/unitxt/test_unitxt_retrieval_at_k.py checks ragassay's metrics in unitxt mode against every value.
"""

import json
from pathlib import Path

from unitxt.artifact import fetch_artifact
from unitxt.test_utils.metrics import apply_metric

CATALOG = "metrics.rag.end_to_end.context_correctness.retrieval_at_k"
PREFIX = "context_correctness_"


def main() -> None:
    here = Path(__file__).parent
    rows = [json.loads(line) for line in (here / "reference.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    predictions = [{"answer": r["answer"], "contexts": r["contexts"], "context_ids": r["contexts_ids"]} for r in rows]
    task_data = [
        {
            "question": r["question"],
            "question_id": r["question_id"],
            "reference_answers": r["reference_answers"],
            "reference_context_ids": r["reference_context_ids"],
            "reference_contexts": [],
            "metadata_field": "",
            "is_answerable_label": True,
        }
        for r in rows
    ]
    metric, _ = fetch_artifact(CATALOG)
    results = apply_metric(metric=metric, predictions=predictions, references=[[]] * len(rows), task_data=task_data)
    out = here / "retrieval_at_k.jsonl"
    with out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"unitxt": "1.26.10", "catalog": CATALOG}) + "\n")
        for row, result in zip(rows, results):
            instance = result["score"]["instance"]
            scores = {
                key[len(PREFIX) :]: float(value)
                for key, value in sorted(instance.items())
                if key.startswith(PREFIX) and "_at_" in key
            }
            handle.write(json.dumps({"question_id": row["question_id"], "unitxt_scores": scores}) + "\n")
    print(f"wrote {out}: {len(rows)} records")


if __name__ == "__main__":
    main()
