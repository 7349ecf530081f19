"""examples/notebook/quickstart.ipynb runs headlessly (nbclient) on a copy of examples/; the run's rich display
(``Run._repr_html_``) is in its outputs. The repository's notebook is never written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.slow
def test_notebook_executes_with_the_rich_display(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("*.db", "report.html", "__pycache__"))
    path = copy / "notebook" / "quickstart.ipynb"
    notebook = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(path.parent)}}).execute()
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert all(cell.execution_count for cell in code)
    assert not [out for cell in code for out in cell.outputs if out.output_type == "error"]
    shown = code[0].outputs[0]["data"]["text/html"]
    assert '<div class="ragassay-run">' in shown and "<th>bm25</th>" in shown
    assert "Verdicts against keyword (baseline), alpha 0.05" in shown
    assert "verdict" in code[1].outputs[0]["data"]["text/html"]  # the compare() DataFrame
    assert (copy / "notebook" / "report.html").is_file()
    assert (copy / "pytest_project" / "ragassay-results.db").is_file()
