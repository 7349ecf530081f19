"""Regenerate reference.jsonl: random Unitxt RAG records and the instance scores Unitxt 1.26 itself gives them.

Run with a Python that has ``unitxt==1.26.10`` installed (not a ragassay dependency)::

    python -m venv /tmp/unitxt && /tmp/unitxt/bin/pip install unitxt==1.26.10
    /tmp/unitxt/bin/python tests/data/unitxt/make_reference.py

Records mix the awkward cases: punctuation, articles, case, repeated words, non-ASCII text, empty answers, empty
and article-only references, contexts without relevant ids, repeated ids. tests/core/unitxt/test_unitxt_parity.py checks
that ragassay's per-sample metrics (compat "unitxt") and its bulk scorer reproduce every value, and that the
global means and confidence intervals match too.
"""

import json
import random
import sys
from pathlib import Path

from unitxt.artifact import fetch_artifact
from unitxt.test_utils.metrics import apply_metric

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))
from unitxt_side import CATALOG  # noqa: E402  (the catalog names and score keys, shared with the benchmark)

WORDS = (
    "the a an The cat sat on mat Mat mat. U.S. 10,000 10 100 well-known don't café Straße İstanbul naïve "
    "x y z alpha beta gamma delta question answer policy leave days 42 hello there general kenobi dude"
).split()


def text(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    if words and rng.random() < 0.3:
        words[-1] += rng.choice([".", "!", "?", " ...", " —"])
    return " ".join(words)


def record(rng: random.Random, i: int) -> dict:
    ids = [f"d{rng.randint(0, 6)}" for _ in range(rng.randint(1, 4))]  # Unitxt fails on no contexts
    return {
        "question": text(rng, 1, 8) or "what?",
        "question_id": f"q{i}",
        "answer": text(rng, 0, 12),
        "contexts": [text(rng, 0, 25) for _ in ids],
        "contexts_ids": ids,
        "reference_answers": [text(rng, 0, 6) for _ in range(rng.randint(1, 3))],
        "reference_context_ids": sorted({f"d{rng.randint(0, 6)}" for _ in range(rng.randint(0, 3))}),
    }


def main() -> None:
    rng = random.Random(12)
    records = [record(rng, i) for i in range(300)]
    predictions = [{k: r[k] for k in ("answer", "contexts")} | {"context_ids": r["contexts_ids"]} for r in records]
    task_data = [
        {k: r[k] for k in ("question", "question_id", "reference_answers", "reference_context_ids")}
        | {"reference_contexts": [], "metadata_field": "", "is_answerable_label": True}
        for r in records
    ]
    scores, global_scores = {}, {}
    for name, (catalog_name, key) in CATALOG.items():
        metric, _ = fetch_artifact(catalog_name)
        results = apply_metric(
            metric=metric, predictions=predictions, references=[[]] * len(records), task_data=task_data
        )
        scores[name] = [float(r["score"]["instance"][key]) for r in results]
        glob = results[0]["score"]["global"]
        global_scores[name] = {
            "mean": float(glob[key]),
            "ci_low": float(glob[f"{key}_ci_low"]) if f"{key}_ci_low" in glob else None,
            "ci_high": float(glob[f"{key}_ci_high"]) if f"{key}_ci_high" in glob else None,
        }
    out = Path(__file__).with_name("reference.jsonl")
    with out.open("w", encoding="utf-8") as handle:
        handle.write(json.dumps({"unitxt": "1.26.10", "global": global_scores}) + "\n")
        for i, r in enumerate(records):
            handle.write(json.dumps({**r, "unitxt_scores": {name: scores[name][i] for name in CATALOG}}) + "\n")
    print(f"wrote {out}: {len(records)} records")


if __name__ == "__main__":
    main()
