"""Perturbed systems give the same numbers under three hash seeds: a small Aurp run (every operator, a grid over
strengths, a hardened twin) in three processes with PYTHONHASHSEED 0, 1 and 2, the stored outputs, traces, metric
values and judgements compared (the harness of tests/test_determinism.py), then its robustness profile
(``ragassay robustness RUN --format json``: effects, intervals, verdicts, rates, groups) computed in three
processes with the same hash seeds and compared."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.test_determinism import ROOT, SEEDS, _assert_identical, _write_configs

RATES = json.dumps(["refusal", "counterfactual_following", "injection_success"])
SYSTEMS = """
[systems.base]
retriever = "bm25"
generator = "extractive"
options = { top_k = 3 }

[systems.cf]
rag = "perturbed"
options = { system = "base", operator = { name = "counterfactual", options = { database = "aurp.sql" } } }

[systems.hardened]
extends = "base"
rag = "naive_hardened"

[systems.hardened_injection]
rag = "perturbed"
options = { system = "hardened", operator = { name = "injection", options = { position = "random" } }, seed = 7 }

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
    configs = _write_configs(tmp_path, dataset, SYSTEMS)
    for config in configs:  # the metrics per perturbation too
        text = config.read_text(encoding="utf-8")
        config.write_text(text.replace("metrics = [", f"metrics = {RATES[:-1]}, ", 1), encoding="utf-8")
    stored = _assert_identical(configs)
    assert len({system for system, _ in stored}) == 5 + 8 * 2
    assert all(item["status"] == "ok" for item in stored.values())
    traces = [item["output"]["trace"].get("perturbation") for item in stored.values()]
    changed = [t["operator"] for t in traces if t and t["changed"]]
    assert set(changed) == {"counterfactual", "paraphrase", "distractors", "drop_gold", "reorder", "truncate"} | {
        "injection",
        "typos",
        "case",
    }

    profiles = [_profile(config, seed) for config, seed in zip(configs, SEEDS)]
    assert profiles[0]["effects"] and profiles[0]["rates"] and profiles[0]["groups"] and profiles[0]["across"]
    for seed, other in zip(SEEDS[1:], profiles[1:]):
        assert other == profiles[0], f"the robustness profile under PYTHONHASHSEED={seed} differs from 0"


def _profile(config, seed: str) -> dict:
    """``ragassay robustness RUN --format json`` in a process with ``PYTHONHASHSEED=seed``, without the run id."""
    with sqlite3.connect(config.parent / f"results-{seed}.db") as conn:
        (run_id,) = conn.execute("SELECT id FROM runs").fetchone()
    done = subprocess.run(
        [sys.executable, "-m", "ragassay", "robustness", run_id, "-c", str(config), "--format", "json"],
        check=False,
        cwd=config.parent,
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"seed {seed}: {done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.replace(run_id, "RUN"))
