"""The starter written by ``ragassay init`` runs as is on a folder of Markdown files."""

from __future__ import annotations

import json
import sqlite3

from conftest import ragassay_cli


def test_starter_runs_on_a_folder_of_markdown_files_with_ids_as_its_comment_says(tmp_path):
    assert ragassay_cli("init", str(tmp_path)).returncode == 0
    starter = (tmp_path / "ragassay.toml").read_text(encoding="utf-8")
    assert '"corpus/library-cards.md"' in starter  # the comment shows how a document id looks
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "library-cards.md").write_text(
        "# Library cards\n\nA library card costs nothing for residents.\n", encoding="utf-8"
    )
    (tmp_path / "corpus" / "hours.md").write_text("# Hours\n\nThe library opens at nine.\n", encoding="utf-8")
    (tmp_path / "qa.jsonl").write_text(
        json.dumps(
            {
                "question_id": "q1",
                "question": "What does a library card cost?",
                "reference_answers": ["nothing"],
                "reference_context_ids": ["corpus/library-cards.md"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    result = ragassay_cli("run", str(tmp_path), "-q", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(tmp_path / "ragassay-results.db") as conn:
        values = conn.execute(
            "SELECT m.metric, m.value FROM metric_values m JOIN outputs o ON o.id = m.output_id "
            "WHERE o.system = 'keyword'"
        ).fetchall()
    assert dict(values)["recall_at_k"] == 1.0
