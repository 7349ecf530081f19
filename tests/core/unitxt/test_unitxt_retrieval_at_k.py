"""Unitxt's RetrievalAtK (match, precision and recall at k) in ragassay's unitxt mode, case for case.

Two sources: Unitxt's published cases (the ``test_metric`` targets in IBM/unitxt ``prepare/metrics/retrieval.py``
and ``prepare/metrics/rag_context_correctness.py``, rounded there to 2 decimals), and the values Unitxt 1.26.10
itself computed for the 300 records of reference.jsonl (tests/data/unitxt/retrieval_at_k.jsonl, written by
make_retrieval_at_k.py), which include samples without references and repeated retrieved ids. Both the
``retrieval_metrics`` plugin (``compat = "unitxt"``) and the ``ir_metrics`` plugin (``variant = "unitxt"``) are
checked; the default (trec_eval / ragassay) semantics are checked to still differ where they should.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pytest

from ragassay import Unscored
from ragassay.models import RAGOutput, Sample
from ragassay.plugin_manager import load_plugins

DATA = Path(__file__).parents[2] / "data" / "unitxt"
K_LIST = (1, 3, 5, 10, 20, 40)
#: Unitxt measure -> (ragassay metric, the option that selects Unitxt's definition)
METRICS = {
    "match": [("hit_at_k", "variant")],
    "precision": [("precision_at_k", "compat"), ("ir_precision_at_k", "variant")],
    "recall": [("recall_at_k", "compat"), ("ir_recall_at_k", "variant")],
}

# prepare/metrics/retrieval.py: predictions, reference ids, and each instance's targets as (match, precision,
# recall) at k = 1, 3, 5, 10, 20, 40
RETRIEVAL_CASES = [
    (
        ["a", "b", "c", "d", "e", "f"],
        ["c", "d"],
        {
            "match": [0.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            "precision": [0.0, 0.33, 0.4, 0.33, 0.33, 0.33],
            "recall": [0.0, 0.5, 1.0, 1.0, 1.0, 1.0],
        },
    ),
    (
        ["g", "r", "u"],
        ["g"],
        {"match": [1.0] * 6, "precision": [1.0, 0.33, 0.33, 0.33, 0.33, 0.33], "recall": [1.0] * 6},
    ),
    (["a", "b", "c"], [], {"match": [0.0] * 6, "precision": [0.0] * 6, "recall": [0.0] * 6}),
]
# prepare/metrics/rag_context_correctness.py (the same metric through the RAG context-correctness pipeline)
CONTEXT_CORRECTNESS_CASES = [
    (
        ["A", "B", "C"],
        ["A", "C"],
        {"match": [1.0] * 6, "precision": [1.0] + [0.67] * 5, "recall": [0.5] + [1.0] * 5},
    ),
    (["A", "B"], ["B"], {"match": [0.0] + [1.0] * 5, "precision": [0.0] + [0.5] * 5, "recall": [0.0] + [1.0] * 5}),
]
PUBLISHED = RETRIEVAL_CASES + CONTEXT_CORRECTNESS_CASES


@functools.cache
def metric_class(name: str):
    return load_plugins().registry.get("metric", name).cls


def metric(name: str, **options):
    cls = metric_class(name)
    return cls(cls.Options(**options))


def case(retrieved, refs):
    sample = Sample(question_id="q", question="?", reference_context_ids=refs)
    return sample, RAGOutput(answer="", contexts=[f"text {i}" for i in retrieved], context_ids=list(retrieved))


def test_published_cases_agree_in_unitxt_mode():
    mismatches, checked = [], 0
    for number, (retrieved, refs, targets) in enumerate(PUBLISHED):
        sample, output = case(retrieved, refs)
        for measure, expected in targets.items():
            for (name, option), (k, target) in ((m, kt) for m in METRICS[measure] for kt in zip(K_LIST, expected)):
                value = metric(name, k=k, **{option: "unitxt"}).score(sample, output)
                checked += 1
                if isinstance(value, Unscored) or abs(value - target) > 0.005:  # the targets have 2 decimals
                    mismatches.append((number, name, k, value, target))
    assert checked == 5 * 6 * 5
    assert mismatches == []


def test_default_semantics_still_differ_on_the_published_cases():
    # trec_eval / ragassay: no references is unscored, and P@k divides by k
    sample, output = case(["a", "b", "c"], [])
    for name in ("hit_at_k", "ir_recall_at_k", "ir_precision_at_k", "recall_at_k", "precision_at_k"):
        assert isinstance(metric(name, k=5).score(sample, output), Unscored)
    sample, output = case(["g", "r", "u"], ["g"])
    assert metric("precision_at_k", k=10).score(sample, output) == 0.1
    assert metric("ir_precision_at_k", k=10).score(sample, output) == 0.1


def unitxt_rows():
    records = [json.loads(line) for line in (DATA / "reference.jsonl").read_text(encoding="utf-8").splitlines()[1:]]
    lines = (DATA / "retrieval_at_k.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["unitxt"] == "1.26.10"
    scores = [json.loads(line) for line in lines[1:]]
    assert [s["question_id"] for s in scores] == [r["question_id"] for r in records]
    return list(zip(records, (s["unitxt_scores"] for s in scores)))


@pytest.mark.parametrize("measure", sorted(METRICS))
def test_every_unitxt_instance_value_is_reproduced(measure):
    rows = unitxt_rows()
    assert sum(not record["reference_context_ids"] for record, _ in rows) > 50  # the empty-reference case is there
    mismatches = []
    for name, option in METRICS[measure]:
        for k in K_LIST:
            scorer = metric(name, k=k, **{option: "unitxt"})
            for record, expected in rows:
                sample, output = case(record["contexts_ids"], record["reference_context_ids"])
                value = scorer.score(sample, output)
                if isinstance(value, Unscored) or not math.isclose(value, expected[f"{measure}_at_{k}"], abs_tol=1e-12):
                    mismatches.append((name, k, record["question_id"], value, expected[f"{measure}_at_{k}"]))
    assert mismatches == [], mismatches[:5]


def test_unitxt_recall_can_exceed_one_and_is_stored():
    # Unitxt counts a relevant id at each position it is listed: recall 2 for [A, A] against [A]
    sample, output = case(["A", "A"], ["A"])
    for name, option in METRICS["recall"]:
        scorer = metric(name, k=5, **{option: "unitxt"})
        assert scorer.score(sample, output) == 2.0
        assert scorer.value_range == (0.0, None) and type(scorer).declared(scorer.options)[1] == (0.0, None)
        assert metric(name, k=5).value_range == (0.0, 1.0)
