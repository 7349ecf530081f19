"""The trajectories section of the HTML report, registered through ``register_sections`` like the shipped ones:
blame by step kind and hop, the first failed hop and each hop's found share, steps per trajectory and the cost of
the extra hops, with the planted values of the hand-built agents run; absent from a run without trajectories
(and its outputs' JSON is then not read)."""

from __future__ import annotations

import pytest

from ragassay.present.html_report import build_report
from ragassay.present.sections.registered import RunView, Sections
from ragassay.results import read_run

from trajectory_runs import write_trajectory_run
from written_runs import write_run


def section_of(page: str) -> str:
    found = page[page.index('<section id="trajectories"') :]
    return found[: found.index("</section>")]


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    store, run_id = write_trajectory_run(tmp_path_factory.mktemp("trajectories-html") / "results.db")
    try:
        page = build_report(store, [run_id])
    finally:
        store.close()
    return section_of(page)


def test_where_trajectories_fail_by_blamed_step(section):
    assert "11 outputs carry a trajectory; the single-shot system is single" in section
    assert (
        "<tr><td>single</td><td>6</td><td>3</td><td>0.500 <small>[0.167, 0.833] n=6 (5)</small></td>"
        "<td>missed_hop 3</td><td>retrieval 3</td><td>hop 2 2, hop 3 1</td><td>blame 5, blame_judge 1</td></tr>"
    ) in section
    assert "<td>tool_call 1, retrieval 1, answer 1</td><td>hop 2 1, hop 3 1, (none) 1</td>" in section


def test_where_trajectories_fail_by_hop(section):
    assert "<th>first failed: hop 1</th><th>first failed: hop 2</th><th>first failed: hop 3</th>" in section
    assert "<tr><td>decompose</td><td>5</td><td>1</td><td>1</td><td>0</td><td>3</td><td>0.800 <small>" in section
    assert '<td>0.000 <small title="fewer than 2 instances (1)">n=1 (1), no interval</small></td></tr>' in section


def test_steps_and_the_cost_of_the_extra_hops(section):
    assert "<tr><td>iterate</td><td>5</td><td>1.600 <small>[1.000, 2.400] n=5 (5)</small></td>" in section
    assert "<td>4.800 <small>[3.200, 6.400] n=5 (5)</small></td><td>1</td></tr>" in section  # one nested agent
    assert "<td>156.7</td><td>1.100</td><td>193.3 <small>" in section  # decompose: 1880/12 tokens per retrieval
    assert "<td>256.2</td><td>2.000</td><td>290.0 <small>" in section and "<td>no</td></tr>" in section


def test_the_section_is_registered_and_absent_without_trajectories(tmp_path):
    placed = {p.info.name: p for p in Sections.of().placed}
    assert placed["trajectories"].builtin and placed["trajectories"].page == "trajectories"
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}, {"metrics": {"m": 0.0}}]})
    try:
        assert '<section id="trajectories"' not in build_report(store, [run_id])
        plain = read_run(store, run_id)
    finally:
        store.close()
    asked = []
    view = RunView.of_run(plain, payloads=lambda: asked.append(1) or plain)
    assert placed["trajectories"].section.sections(view) is None and asked == []  # no JSON read for nothing
    assert "no trajectories to show" in placed["trajectories"].section.absent(plain)
