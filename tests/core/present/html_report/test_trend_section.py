"""The HTML report's drift section: per-day windows of a run scored from traces; absent for other runs."""

from __future__ import annotations

from ragassay.config import load_config
from ragassay.engine.project import Project
from ragassay.present.html_report import build_report

from trace_runs import DAYS, PER_DAY, make_run


def page_of(folder, run_id):
    store = Project(load_config(folder)).open_store()
    try:
        return build_report(store, [run_id])
    finally:
        store.close()


def test_the_section_shows_each_window_and_flags_the_drift(tmp_path):
    page = page_of(tmp_path, make_run(tmp_path))
    section = page[page.index('<section id="drift"') :]
    section = section[: section.index("</section>")]
    assert "exact_match of app by day" in section and "judge:match of app by day" in section
    assert "<td>2025-03-06</td><td>12</td><td>0.250 [0.08, 0.58]</td><td>-0.750 [-1.00, -0.42]</td>" in section
    assert "<td>lower (worse)</td>" in section


def test_no_section_without_trace_starts(tmp_path):
    page = page_of(tmp_path, make_run(tmp_path, untimed=DAYS * PER_DAY))
    assert 'id="drift"' not in page
