"""The HTML report's robustness section: the profile of a run with perturbed systems, escaped; absent otherwise."""

from __future__ import annotations

import pytest

from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.html_report import build_report

from robustness_project import make_run


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    folder, run_id = make_run(tmp_path_factory.mktemp("robustness-html"))
    store = Project(load_config(folder)).open_store()
    try:
        return build_report(store, [run_id])
    finally:
        store.close()


def test_the_section_shows_each_effect_with_its_interval_and_the_ranking(page):
    section = page[page.index('<section id="robustness"') :]
    section = section[: section.index("</section>")]
    assert "<td>distractors</td><td>k=3</td><td>judge:match</td><td>-0.625 [-1.000, -0.250]</td>" in section
    assert "what breaks each system most (judge:match)" in section
    assert "<td>injected</td><td>injection_success</td><td>0.250" in section
    assert "do robust groups stay robust? (GRAMMAR groups)" in section
