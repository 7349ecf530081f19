"""``drop_gold`` leaves a sample whose retrieved chunks were all gold without context: that is its purpose, so
the run does not warn about it (issue 38, item 12)."""

from __future__ import annotations

import shutil
from pathlib import Path

import ragassay

AURP = Path(__file__).resolve().parents[3] / "examples" / "aurp"
CONFIG = """
[project]
name = "quiet"

[dataset]
source = "grammar"

[dataset.options]
sql_dump = "aurp.sql"
templates = "templates.yaml"
documents = ["corpus/**/*.md"]
sampling = { mode = "stratified", per_group = 1, by = "query_length" }

[defaults]
chunker = { name = "recursive", options = { size = 400, overlap = 0, title_prefix = true } }

[systems.bm25]
retriever = "bm25"
generator = "extractive"
options = { top_k = 1 }

[systems.drop_gold]
rag = { name = "perturbed", options = { system = "bm25", operator = { name = "drop_gold" } } }

[evaluation]
metrics = ["contains_answer"]
"""


def test_drop_gold_outputs_without_context_raise_no_warning(tmp_path):
    for name in ("corpus", "aurp.sql", "templates.yaml"):
        source = AURP / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    (tmp_path / "ragassay.toml").write_text(CONFIG, encoding="utf-8")
    run = ragassay.run(tmp_path)
    data = run.data(payloads=True)
    empty = [q for q in data.question_ids if not data.payload("drop_gold", q).contexts]
    assert len(empty) > 10  # top_k = 1: wherever the one chunk was gold, nothing is left
    assert not [w for w in run.warnings if "no retrieved context" in w], run.warnings
