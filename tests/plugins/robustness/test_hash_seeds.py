"""Perturbed systems store the same numbers under three hash seeds: a small Aurp run (every operator, a grid
over strengths) in three processes with PYTHONHASHSEED 0, 1 and 2, the stored outputs, traces, metric values and
judgements compared (the harness of tests/test_determinism.py)."""

from __future__ import annotations

import shutil

import pytest

from tests.test_determinism import ROOT, _assert_identical, _write_configs

SYSTEMS = """
[systems.base]
retriever = "bm25"
generator = "extractive"
options = { top_k = 3 }

[systems.cf]
rag = "perturbed"
options = { system = "base", operator = { name = "counterfactual", options = { database = "aurp.sql" } } }

[systems.para]
rag = "perturbed"
options = { system = "base", operator = { name = "paraphrase", options = { templates = "templates.yaml" } } }

[grid.robustness]
extends = "cf"
"options.operator" = [
  { name = "distractors", options = { k = 2 } },
  { name = "distractors", options = { k = 2, mode = "hard", position = "random" } },
  { name = "drop_gold" },
  { name = "reorder", options = { gold = "middle" } },
  { name = "truncate", options = { tokens = 12 } },
  { name = "injection", options = { position = "random" } },
  { name = "typos", options = { rate = 0.3 } },
  { name = "case", options = { mode = "random" } },
]
"options.seed" = [0, 7]
"""


@pytest.mark.slow
def test_perturbed_systems_store_identical_results_under_three_hash_seeds(tmp_path):
    aurp = ROOT / "examples" / "aurp"
    shutil.copytree(aurp / "corpus", tmp_path / "corpus")
    for name in ("aurp.sql", "templates.yaml"):
        shutil.copy(aurp / name, tmp_path / name)
    dataset = (
        '[dataset]\nsource = "grammar"\nlimit = 24\n\n[dataset.options]\nsql_dump = "aurp.sql"\n'
        'templates = "templates.yaml"\ndocuments = ["corpus/**/*.md"]\n'
    )
    stored = _assert_identical(_write_configs(tmp_path, dataset, SYSTEMS))
    assert len({system for system, _ in stored}) == 3 + 8 * 2
    assert all(item["status"] == "ok" for item in stored.values())
    traces = [item["output"]["trace"].get("perturbation") for item in stored.values()]
    changed = [t["operator"] for t in traces if t and t["changed"]]
    assert set(changed) == {"counterfactual", "paraphrase", "distractors", "drop_gold", "reorder", "truncate"} | {
        "injection",
        "typos",
        "case",
    }
