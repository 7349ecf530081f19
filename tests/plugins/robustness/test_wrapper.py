"""The ``perturbed`` rag in real runs: the contract trace, the stored spec, grids over operators, one unperturbed
retrieval per question shared by every perturbation, and configuration errors before any work."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragassay import ConfigError, Retriever, ScoredChunk, hookimpl
from ragassay.testing import run_project

CORPUS = {
    "zurich.md": "The Zürich office opened in 1998. It has 42 staff.",
    "oslo.md": "The Oslo office opened in 2005. It has 17 staff.",
    "paris.md": "The Paris office opened in 2012. It has 9 staff.",
    "lyon.md": "Lyon hosts the archive. The archive opened in 1987.",
}
SAMPLES = [
    {"question_id": f"q{i}", "question": q, "reference_answers": [a], "reference_context_ids": [f"corpus/{d}"]}
    for i, (q, a, d) in enumerate(
        [
            ("When did the Zürich office open?", "1998", "zurich.md"),
            ("How many staff does the Oslo office have?", "17", "oslo.md"),
            ("When did the Paris office open?", "2012", "paris.md"),
            ("When did the archive open?", "1987", "lyon.md"),
        ]
    )
]


class Counting(Retriever):
    """Word-overlap ranking that counts its queries (the far side of the boundary the sharing must spare)."""

    name = "counting"
    calls = 0

    def index(self, chunks):
        self.chunks = list(chunks)

    def retrieve(self, query, k):
        type(self).calls += 1
        words = set(query.lower().split())
        ranked = sorted(self.chunks, key=lambda c: (-len(words & set(c.text.lower().split())), c.id))[:k]
        return [ScoredChunk(chunk=c, score=float(k - i), rank=i + 1) for i, c in enumerate(ranked)]


class Plugin:
    @hookimpl
    def register_retrievers(self, register):
        register(Counting)


def config(**extra):
    data = {
        "project": {"results": "results.db"},
        "systems": {
            "base": {"retriever": "t/counting", "generator": "extractive", "options": {"top_k": 2}},
            "pert": {"rag": "perturbed", "options": {"system": "base", "operator": {"name": "drop_gold"}}},
        },
        "evaluation": {"metrics": ["contains_answer"]},
    }
    data.update(extra)
    return data


GRID = {
    "robustness": {
        "extends": "pert",
        "options.operator": [
            {"name": "distractors", "options": {"k": 1}},
            {"name": "distractors", "options": {"k": 2}},
            {"name": "injection"},
            {"name": "case", "options": {"mode": "upper"}},
        ],
        "options.seed": [0, 1],
    }
}


def test_grid_of_perturbations_shares_one_retrieval_per_question(tmp_path):
    Counting.calls = 0
    run = run_project(tmp_path, config(grid=GRID), plugins={"t": Plugin()}, corpus=CORPUS, samples=SAMPLES)
    assert run.failed == 0
    systems = {system for system, _ in run.outputs}
    assert "robustness[operator=distractors(k=2),seed=1]" in systems and len(systems) == 2 + 4 * 2
    # base once, the 7 context perturbations (pert + 6 grid systems) share one more; the 2 'case' systems
    # change the question, so each retrieves its own
    assert Counting.calls == len(SAMPLES) * (1 + 1 + 2)
    for (system, qid), output in run.outputs.items():
        if system == "base":
            assert "perturbation" not in output.trace
            continue
        p = output.trace["perturbation"]
        assert set(p) == {"operator", "options", "seed", "base", "target", "gold_present", "expected_answer"} | {
            "original_answer",
            "canary",
            "changed",
            "details",
        }
        assert p["base"] == "base" and isinstance(p["changed"], bool)
        if p["operator"] == "drop_gold":
            gold = {
                ref for sample in SAMPLES if sample["question_id"] == qid for ref in sample["reference_context_ids"]
            }
            assert p["gold_present"] is False and not gold & set(output.context_document_ids)
            assert p["changed"] == bool(gold & set(run.outputs[("base", qid)].context_document_ids))
        if p["operator"] == "injection":
            assert p["canary"] in output.contexts[0] and p["target"] == "context"
        if p["operator"] == "case":
            assert p["target"] == "question" and output.trace["perturbation"]["changed"]
    spec = _spec(tmp_path, "robustness[operator=distractors(k=2),seed=1]")
    assert spec["rag"]["options"] == {
        "system": "base",
        "operator": {
            "name": "distractors",
            "options": {
                "k": 2,
                "mode": "random",
                "position": "end",
                "retriever": {"name": "bm25", "options": {}, "label": None},
            },
        },
        "seed": 1,
    }
    assert spec["rag"]["components"]["system"]["name"] == "naive" and spec["parts"]["retriever"]["name"] == "t/counting"


def _spec(root, name):
    with sqlite3.connect(root / "results.db") as conn:
        (text,) = conn.execute("SELECT spec_json FROM run_systems WHERE name = ?", (name,)).fetchone()
    return json.loads(text)


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        (
            {
                "nr": {"rag": "no_retrieval", "generator": "extractive"},
                "p": {"rag": "perturbed", "options": {"system": "nr", "operator": {"name": "drop_gold"}}},
            },
            "systems.p.options.system.*must implement retrieve_step and answer_from",
        ),
        (
            {
                "r": {"rag": "retrieval", "retriever": "bm25"},
                "p": {"rag": "perturbed", "options": {"system": "r", "operator": {"name": "case"}}},
            },
            "systems.p.options.system.*'retrieval' gives no answer",
        ),
        (
            {"p": {"rag": "perturbed", "options": {"system": "nope", "operator": {"name": "drop_gold"}}}},
            "no system named 'nope'",
        ),
        (
            {
                "p": {
                    "rag": "perturbed",
                    "retriever": "bm25",
                    "options": {"system": "base", "operator": {"name": "drop_gold"}},
                }
            },
            "takes its parts; remove retriever here",
        ),
        (
            {
                "a": {"rag": "perturbed", "options": {"system": "b", "operator": {"name": "case"}}},
                "b": {"rag": "perturbed", "options": {"system": "a", "operator": {"name": "case"}}},
            },
            "systems wrap each other \\(a -> b -> a\\)",
        ),
        (
            {"p": {"rag": "perturbed", "options": {"system": "base", "operator": {"name": "shuffle"}}}},
            "no perturbation operator 'shuffle'",
        ),
    ],
)
def test_configuration_errors_before_any_work(tmp_path, systems, message):
    data = config()
    data["systems"] = {"base": data["systems"]["base"], **systems}
    with pytest.raises(ConfigError, match=message):
        run_project(tmp_path, data, plugins={"t": Plugin()}, corpus=CORPUS, samples=SAMPLES)


def test_question_operators_wrap_any_rag(tmp_path):
    data = config()
    data["systems"] = {
        "nr": {"rag": "no_retrieval", "generator": "extractive"},
        "typo": {
            "rag": "perturbed",
            "options": {"system": "nr", "operator": {"name": "typos", "options": {"rate": 1}}},
        },
    }
    run = run_project(tmp_path, data, plugins={"t": Plugin()}, corpus=CORPUS, samples=SAMPLES)
    assert run.failed == 0
    traces = [o.trace["perturbation"] for (s, _), o in run.outputs.items() if s == "typo"]
    assert len(traces) == len(SAMPLES) and all(t["changed"] and t["gold_present"] is None for t in traces)
