"""ragassay reproduces Unitxt 1.26.10 number for number on tests/data/unitxt/reference.jsonl.

The reference file holds 300 awkward records and the instance scores, global means and 95% intervals that Unitxt
itself computed for them (tests/data/unitxt/make_reference.py). Both ragassay paths are checked: the per-sample
metric plugins in compat "unitxt" mode, and the bulk scorer behind ``ragassay unitxt score``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragassay.models import RAGOutput
from ragassay.plugin_manager import load_plugins
from ragassay.unitxt import parse_record, record_to_sample
from ragassay.unitxt.scoring import METRIC_NAMES, score_records

REFERENCE = Path(__file__).parents[2] / "data" / "unitxt" / "reference.jsonl"


def load():
    lines = REFERENCE.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    rows = [json.loads(line) for line in lines[1:]]
    records = [parse_record(row, f"line {i}", i) for i, row in enumerate(rows, start=2)]
    return header, rows, records


def test_reference_file_is_the_unitxt_output():
    header, rows, _ = load()
    assert header["unitxt"] == "1.26.10"
    assert len(rows) == 300
    assert set(rows[0]["unitxt_scores"]) == set(METRIC_NAMES)


@pytest.mark.parametrize("name", METRIC_NAMES)
def test_metric_plugins_in_unitxt_mode_match_every_instance(name):
    _, rows, records = load()
    info = load_plugins().registry.get("metric", name)
    metric = info.cls(info.cls.Options(compat="unitxt"))
    mismatches = []
    for row, record in zip(rows, records):
        output = RAGOutput(answer=record.answer, contexts=list(record.contexts), context_ids=list(record.contexts_ids))
        value = metric.score(record_to_sample(record), output)
        if not math.isclose(value, row["unitxt_scores"][name], rel_tol=0, abs_tol=1e-12):
            mismatches.append((record.question_id, value, row["unitxt_scores"][name]))
    assert not mismatches, mismatches[:5]


def test_bulk_scorer_matches_instances_means_and_intervals():
    header, rows, records = load()
    scores = score_records(records, METRIC_NAMES, compat="unitxt")
    for j, name in enumerate(scores.names):
        expected = [row["unitxt_scores"][name] for row in rows]
        assert scores.values[:, j].tolist() == pytest.approx(expected, abs=1e-12), name
        unitxt = header["global"][name]
        interval = scores.intervals[j]
        assert interval.mean == pytest.approx(unitxt["mean"], abs=1e-12), name
        assert interval.ci_low == pytest.approx(unitxt["ci_low"], abs=1e-9), name
        assert interval.ci_high == pytest.approx(unitxt["ci_high"], abs=1e-9), name
