"""The project of issue 38's item 13, for the tests of the conclusion every report opens with: Aurp's GRAMMAR
samples cut to 32 questions (8 semantic groups), three systems (keyword matching, BM25, keyword matching keeping
one context) with the offline extractive reader, so that some comparisons are decided, some cannot be, and the
wrong answers carry GRAMMAR blame."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import REPO

AURP = REPO / "examples" / "aurp"
CONFIG = """
[project]
name = "conclusion"

[dataset]
source = "grammar"
limit = 32

[dataset.options]
sql_dump = "aurp.sql"
templates = "templates.yaml"
documents = ["corpus/**/*.md"]

[defaults]
chunker = { name = "recursive", options = { size = 400, overlap = 0, title_prefix = true } }

[systems.keyword]
retriever = "keyword"
generator = "extractive"
options = { top_k = 3 }

[systems.bm25]
extends = "keyword"
retriever = "bm25"

[systems.top1]
extends = "keyword"
options = { top_k = 1 }

[evaluation]
metrics = ["token_recall", "contains_answer", "context_mrr", "recall_at_k"]
judges = ["match"]

[analysis]
judge = "match"
"""


def write_and_run(root: Path) -> tuple[Path, str]:
    """Write the project under ``root``, run it in this process; returns (config path, run id)."""
    import ragassay

    shutil.copytree(AURP / "corpus", root / "corpus")
    for name in ("aurp.sql", "templates.yaml"):
        shutil.copy(AURP / name, root / name)
    config = root / "ragassay.toml"
    config.write_text(CONFIG, encoding="utf-8")
    return config, ragassay.run(config).summary.run_id
