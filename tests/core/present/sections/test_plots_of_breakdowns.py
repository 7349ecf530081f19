"""The breakdown plots show what the table says: a binary metric as rates with intervals, never a box that hides
its failures; a constant metric is named, not plotted on an empty axis (issue 38, item 7)."""

from __future__ import annotations

import re

from ragassay.analysis.breakdown import breakdown
from ragassay.present.sections.breakdowns import breakdowns_section
from ragassay.results import read_run

from written_runs import write_run

SAMPLES = 36


def _panels(svg: str) -> list[list[str]]:
    """The text of each panel: its tick labels, then its y label (matplotlib writes them in that order)."""
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    panels, current = [], []
    for text in texts:
        current.append(text)
        if text in ("correct", "token_recall", "exact_match") or text.startswith("judge:"):
            panels.append(current)
            current = []
    return panels


def test_a_binary_metric_is_drawn_as_rates_and_a_constant_one_is_named(tmp_path):
    # "correct" is right 7 times in 9 (mean 0.78): every quartile is 1, so a box is a flat line at 1.0
    cells = [
        {"metrics": {"exact_match": 0.0, "correct": float(i % 9 not in (0, 4)), "token_recall": (i % 7) / 7}}
        for i in range(SAMPLES)
    ]
    metadata = [{"kind": "xy"[i % 2]} for i in range(SAMPLES)]
    store, run_id = write_run(tmp_path / "results.db", {"a": cells, "b": cells}, metadata=metadata)
    try:
        run = read_run(store, run_id)
        result = breakdown(run, "metadata.kind")
        section = breakdowns_section(run, [result])
    finally:
        store.close()
    means = {r.mean for r in result.rows if r.metric == "correct"}
    assert all(0.7 < m < 0.85 for m in means)  # the failures the plot must show
    assert "Not plotted: exact_match (0.000 on every system and sample)" in section.legend
    svg = str(section.parts[1].svg)
    panels = _panels(svg)
    assert [p[-1] for p in panels] == ["correct", "token_recall"]  # no panel for the constant metric
    assert "exact_match" not in svg
    correct_ticks = panels[0][:-1]
    assert "(rate, 95% CI)" in svg and {"0.0", "1.0"} <= set(correct_ticks)  # the whole [0, 1], not 0.95-1.05
    assert {"0.0", "1.0"} <= set(panels[1])  # a continuous metric on its declared range [0, 1]
