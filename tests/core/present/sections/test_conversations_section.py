"""The conversations section of the HTML report, registered through ``register_sections`` like the shipped ones:
quality by turn depth and by answerability class, answerability recall and balanced accuracy, first failures,
with the planted values of a hand-built conversational run; absent from a run without turns."""

from __future__ import annotations

import pytest

from ragassay.present.html_report import build_report
from ragassay.present.sections.registered import Sections

from conversation_runs import write_bare_turns, write_conversation_run
from written_runs import write_run


@pytest.fixture(scope="module")
def section(tmp_path_factory):
    store, run_id = write_conversation_run(tmp_path_factory.mktemp("conversations-html") / "results.db")
    try:
        page = build_report(store, [run_id])
    finally:
        store.close()
    found = page[page.index('<section id="conversations"') :]
    return found[: found.index("</section>")]


def test_quality_by_turn_depth(section):
    assert "8 turns in 3 conversations." in section
    assert "<tr><td>1</td><td>last</td><td>3</td><td>0.833 <small>[0.500, 1.000] n=3 (3)</small></td>" in section
    assert "<tr><td>3</td><td>last</td><td>2</td><td>0.500 <small>[0.000, 1.000] n=2 (2)</small></td>" in section
    assert (
        '<tr><td>2</td><td>rewrite</td><td>3</td><td>1.000 <small title="every scored instance has the same value">n=2 (2), no interval</small></td>'
        in section
    )


def test_quality_by_answerability_class(section):
    assert "<tr><td>answerable</td><td>last</td><td>5</td><td>0.800 <small>[0.750, 1.000] n=5 (3)</small>" in section
    lone = '<td>0.000 <small title="fewer than 2 instances (1)">n=1 (1), no interval</small></td>'
    assert f"<tr><td>underspecified</td><td>last</td><td>1</td>{lone}" in section


def test_answerability_recall_balanced_accuracy_and_confusion(section):
    assert "<td>0.433 <small>[0.333, 0.750] n=8 (3)</small></td><td>0</td></tr>" in section  # (0.8 + 0.5 + 0) / 3
    assert "<td>0.833 <small>[0.500, 1.000] n=7 (3)</small></td><td>1</td></tr>" in section  # one turn unscored
    assert "<tr><td>last</td><td>answerable</td><td>4</td><td>1</td><td>0</td></tr>" in section
    assert "<tr><td>rewrite</td><td>unanswerable</td><td>0</td><td>1</td><td>1</td></tr>" in section


def test_where_conversations_first_failed(section):
    assert "<tr><td>last</td><td>3</td><td>8</td><td>3</td><td>1.667</td><td>retrieval 2, generation 1</td>" in section
    assert (
        "<tr><td>rewrite</td><td>3</td><td>8</td><td>1</td><td>3.000</td><td>context_loss 1</td><td>1</td>" in section
    )


def test_the_section_is_registered_and_absent_without_turns(tmp_path):
    placed = {p.info.name: p for p in Sections.of().placed}
    assert placed["conversations"].builtin and placed["conversations"].page == "conversations"
    store, run_id = write_run(tmp_path / "plain.db", {"a": [{"metrics": {"m": 1.0}}, {"metrics": {"m": 0.0}}]})
    try:
        page = build_report(store, [run_id])
    finally:
        store.close()
    assert '<section id="comparison"' in page and '<section id="conversations"' not in page


def test_turns_without_labels_or_blame(tmp_path):
    store, run_id = write_bare_turns(tmp_path / "bare.db")
    try:
        page = build_report(store, [run_id])
    finally:
        store.close()
    section = page[page.index('<section id="conversations"') :]
    section = section[: section.index("</section>")]
    assert "4 turns in 2 conversations." in section
    # turn 2: b's output failed, so one scored turn of two
    assert '<tr><td>2</td><td>s</td><td>2</td><td>0.500 <small title="fewer than 2 instances (1)">' in section
    assert "by answerability class" not in section and "answerability behaviour" not in section
    assert "No turn_blame metric in this run" in section
