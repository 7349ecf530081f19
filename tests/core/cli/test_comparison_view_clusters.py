"""``compare`` on a run of conversation turns says its cells resample whole conversations; on single questions the
legend is the plain bootstrap's (issue 39, statistics that know turns are not independent)."""

from __future__ import annotations

from click.testing import CliRunner

from ragassay.cli.main import cli

from conversation_runs import RUN_ID, write_conversation_run
from written_runs import RUN_ID as SINGLE_RUN_ID
from written_runs import write_run


def legend(db: str, run_id: str) -> str:
    result = CliRunner().invoke(cli, ["compare", "--db", db, run_id, "--table", "comparison"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    return text[text.index("cells: mean") :]


def test_the_cells_of_turns_resample_whole_conversations(tmp_path):
    store, _ = write_conversation_run(tmp_path / "turns.db")
    store.close()
    said = legend(str(tmp_path / "turns.db"), RUN_ID)
    assert said.startswith("cells: mean over scored outputs (n scored turns) and its 95% cluster-bootstrap interval")
    assert "[low, high] (whole conversations resampled);" in said


def test_single_questions_keep_the_plain_legend(tmp_path):
    store, _ = write_run(tmp_path / "single.db", {"a": [{"metrics": {"recall": 0.5}}, {"metrics": {"recall": 1.0}}]})
    store.close()
    said = legend(str(tmp_path / "single.db"), SINGLE_RUN_ID)
    assert said.startswith("cells: mean over scored outputs (n scored) and its 95% bootstrap interval [low, high];")
