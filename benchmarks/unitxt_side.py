"""The Unitxt side of benchmarks/unitxt_metrics.py: run with a Python that has ``unitxt==1.26.10`` installed.

Reads a Unitxt RAG JSONL file, scores it with Unitxt's own catalog metrics (``apply_metric``), and writes JSON
with each metric's instance scores, global score, optional interval and the seconds it took. ``--resamples 0``
turns Unitxt's confidence intervals off (its BCa jackknife is O(n^2): hours at 100,000 instances).

    python benchmarks/unitxt_side.py data.jsonl out.json --resamples 0 [--limit N]
"""

from __future__ import annotations

import argparse
import json
import time

CATALOG = {
    "token_recall": ("metrics.rag.end_to_end.answer_correctness", "answer_correctness_recall"),
    "k_precision": ("metrics.rag.end_to_end.answer_faithfulness", "answer_faithfulness_precision"),
    "answer_relevance_token_recall": (
        "metrics.rag.end_to_end.answer_relevance.token_recall",
        "answer_relevance_token_recall_recall",
    ),
    "context_relevance_token_precision": (
        "metrics.rag.end_to_end.context_relevance.token_precision",
        "context_relevance_token_precision_precision",
    ),
    "context_mrr": ("metrics.rag.end_to_end.context_correctness", "context_correctness_mrr"),
    "context_map": ("metrics.rag.end_to_end.context_correctness.map", "context_correctness_map"),
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("data")
    parser.add_argument("out")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--metrics", default=",".join(CATALOG))
    args = parser.parse_args()

    from unitxt.settings_utils import get_settings

    get_settings().num_resamples_for_instance_metrics = args.resamples
    from unitxt.artifact import fetch_artifact
    from unitxt.test_utils.metrics import apply_metric

    with open(args.data, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle][: args.limit]
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
    result = {"n": len(rows), "resamples": args.resamples, "metrics": {}}
    for name in args.metrics.split(","):
        catalog_name, key = CATALOG[name]
        metric, _ = fetch_artifact(catalog_name)
        started = time.perf_counter()
        scored = apply_metric(metric=metric, predictions=predictions, references=[[]] * len(rows), task_data=task_data)
        seconds = time.perf_counter() - started
        glob = scored[0]["score"]["global"]
        result["metrics"][name] = {
            "seconds": seconds,
            "instances": [float(s["score"]["instance"][key]) for s in scored],
            "mean": float(glob[key]),
            "ci_low": float(glob[f"{key}_ci_low"]) if f"{key}_ci_low" in glob else None,
            "ci_high": float(glob[f"{key}_ci_high"]) if f"{key}_ci_high" in glob else None,
        }
        print(f"unitxt {name}: {seconds:.2f} s", flush=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
