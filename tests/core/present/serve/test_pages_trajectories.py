"""``ragassay serve`` on the hand-built agents run (tests/trajectory_runs.py): the sample page shows each system's
trajectory as a timeline with the gold per hop and the blamed step; the run's "trajectories" page (a registered
section) shows where trajectories fail, their steps and the cost of the extra hops; planted markup only as text;
no tab and a 404 for a run without trajectories."""

from __future__ import annotations

import html

import pytest

from serve_helpers import client, text_of
from trajectory_runs import MARKUP, PLANT, RUN_ID, write_trajectory_run
from written_runs import write_run

RUN = f"/runs/{RUN_ID}"


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    store, _ = write_trajectory_run(tmp_path_factory.mktemp("trajectory-pages") / "results.db")
    yield client(store)
    store.close()


def test_the_sample_page_shows_the_timeline_with_the_gold_per_hop(web):
    page = web.get(f"{RUN}/samples/q1")
    assert page.status_code == 200, page.text
    text = text_of(page.text)
    assert "Gold per hop hop 1 hop 1 of q1 d1 hop 2 hop 2 of q1 d2" in text
    iterate = text[text.index("iterate ok") :]
    assert "Trajectory: 7 steps, 400 tokens, 3.000 s; blame ok" in iterate
    assert "hop 2 (hop 2 of q1): gold d2: found by s4" in iterate
    assert "1 retrieval search query: Which country is the client of project Apollo in? [1] d1#0 (d1) GOLD hop 1" in (
        iterate
    )
    assert '<td style="padding-left: 1.8em">tool_call</td>' in page.text  # the nested agent's step, indented
    assert f'result: {{"name": "Acme {PLANT}"}}' in iterate
    assert PLANT not in page.text and html.escape(PLANT, quote=False) in page.text  # markup only as text
    assert "Trajectory" not in text[text.index("single ok") : text.index("decompose ok")]


def test_the_blamed_step_is_marked_on_the_sample_page(web):
    page = web.get(f"{RUN}/samples/q2")
    text = text_of(page.text)
    iterate = text[text.index("iterate ok") :]
    assert "blame tool_error (hop 2): tool_error at s3" in iterate
    assert f'3 tool_call BLAMED sql arguments: {{"query": "{MARKUP}"}} error: timeout after 30 s' in iterate
    assert page.text.count('<tr class="step blamed">') == 2  # decompose's missed hop, iterate's tool error
    assert "hop 2 (hop 2 of q2): gold d4: NOT FOUND" in iterate


def test_the_trajectories_page(web):
    page = web.get(f"{RUN}/trajectories")
    assert page.status_code == 200, page.text
    assert f'href="{RUN}/trajectories" class="here">trajectories' in page.text  # its tab
    text = text_of(page.text)
    assert "11 outputs carry a trajectory; the single-shot system is single" in text
    assert "iterate 5 3 0.600" in text and "tool_error 1, loop 1, unsupported_answer 1" in text
    assert "tool_call 1, retrieval 1, answer 1 hop 2 1, hop 3 1, (none) 1 blame 4, blame_judge 1" in text
    assert "decompose 5 1 1 0 3 0.800" in text  # first failed at hop 1, 2, 3, every hop found; hop 1 found
    assert "decompose 6 6 2.000" in text and "313.3" in text and "193.3" in text


def test_no_trajectories_tab_without_trajectories(tmp_path):
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}, {"metrics": {"m": 0.0}}]})
    try:
        web = client(store)
        assert "/trajectories" not in web.get(f"/runs/{run_id}").text
        missing = web.get(f"/runs/{run_id}/trajectories")
        assert missing.status_code == 404 and "no trajectories to show" in missing.text
    finally:
        store.close()
