"""The drift page: a run scored from traces shows its windows as ``ragassay traces trend`` does; other runs 404."""

from __future__ import annotations

from ragassay.config import load_config
from ragassay.engine.project import Project

from serve_helpers import client
from trace_runs import DAYS, PER_DAY, make_run


def _web(folder):
    return Project(load_config(folder)).open_store()


def test_the_drift_page_shows_the_windows_and_flags(tmp_path):
    run_id = make_run(tmp_path)
    store = _web(tmp_path)
    try:
        web = client(store)
        page = web.get(f"/runs/{run_id}/drift").text
        assert "exact_match of app by day" in page
        assert "<td>2025-03-06</td><td>12</td><td>0.250 [0.08, 0.58]</td><td>-0.750 [-1.00, -0.42]</td>" in page
        assert f'/runs/{run_id}/drift" class="here">drift' in page  # the tab shows for a run from traces
        weekly = web.get(f"/runs/{run_id}/drift?by=week").text
        assert "exact_match of app by week" in weekly
        assert web.get(f"/runs/{run_id}/drift?by=month").status_code == 400
    finally:
        store.close()


def test_no_drift_page_without_trace_starts(tmp_path):
    run_id = make_run(tmp_path, untimed=DAYS * PER_DAY)
    store = _web(tmp_path)
    try:
        web = client(store)
        assert web.get(f"/runs/{run_id}/drift").status_code == 404
        assert "/drift" not in web.get(f"/runs/{run_id}").text
    finally:
        store.close()
