"""The robustness page: the profile of a run with perturbed systems, as the HTML report shows it."""

from __future__ import annotations

from ragassay.config import load_config
from ragassay.engine.project import Project

from robustness_project import make_run
from serve_helpers import client


def test_the_robustness_page_shows_the_profile(tmp_path):
    folder, run_id = make_run(tmp_path)
    store = Project(load_config(folder)).open_store()
    try:
        web = client(store)
        page = web.get(f"/runs/{run_id}/robustness").text
        assert "<td>distractors</td><td>k=3</td><td>judge:match</td><td>-0.625 [-1.000, -0.250]</td>" in page
        assert "what breaks each system most (judge:match)" in page
        assert f'/runs/{run_id}/robustness" class="here">robustness' in page  # the tab shows for this run only
    finally:
        store.close()
