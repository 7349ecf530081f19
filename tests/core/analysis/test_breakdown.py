"""Breakdowns (per-group mean, interval, share) and the cost view, on a real small run."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import ragassay
from ragassay.analysis.bootstrap import bootstrap_mean_ci
from ragassay.analysis.breakdown import MISSING, breakdown
from ragassay.analysis.cost_view import cost_view
from ragassay.errors import ConfigError

from conftest import BASIC_CONFIG, QA, write_project

TYPES = ["html", "pdf", "html"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("breakdown")
    qa = [
        dict(q, metadata={"document_type": TYPES[i], "source": {"site": "a" if i else "b"}}, words=len(q["question"]))
        for i, q in enumerate(QA)
    ]
    write_project(root, BASIC_CONFIG, qa=qa)
    return ragassay.run(root).data(payloads=True)


@pytest.fixture(scope="module")
def frames(run):
    from ragassay.present.frames import frames_of

    return frames_of(run)


def test_groups_by_metadata_with_share_mean_and_interval(run, frames):
    result = breakdown(run, "metadata.document_type", ["token_recall", "judge:match"])
    assert result.groups == ["html", "pdf"] and result.sizes == {"html": 2, "pdf": 1}
    scores = frames.scores()
    for row in result.rows:
        ids = [q["question_id"] for q, t in zip(QA, TYPES) if t == row.group]
        values = scores.loc[row.system].loc[ids, row.metric].to_numpy()
        expected = bootstrap_mean_ci(values)
        assert row.n == len(ids) and row.share == pytest.approx(len(ids) / 3)
        assert row.mean == pytest.approx(np.nanmean(values))
        assert (row.ci_low, row.ci_high) == (expected.ci_low, expected.ci_high) or row.reason
    pdf = [row for row in result.rows if row.group == "pdf"]
    assert pdf and all(r.ci_low is None and r.reason == "fewer than 2 scored values (1)" for r in pdf)
    assert {(r.system, r.metric) for r in result.rows} == {
        (s, m) for s in ("keyword", "bm25") for m in ("token_recall", "judge:match")
    }


def test_nested_path_numeric_bins_and_reproducibility(run):
    nested = breakdown(run, "metadata.source.site", ["judge:match"])
    assert nested.sizes == {"a": 2, "b": 1}
    binned = breakdown(run, "words", ["judge:match"], bins=2)
    assert len(binned.groups) == 2 and sum(binned.sizes.values()) == 3
    assert all(g.startswith("[") for g in binned.groups)
    assert breakdown(run, "words", ["judge:match"], bins=2).as_dict() == binned.as_dict()


def test_unknown_field_metric_and_text_bins_are_config_errors(run):
    with pytest.raises(ConfigError, match="no sample field 'metadata.nope'.*metadata.document_type"):
        breakdown(run, "metadata.nope")
    with pytest.raises(ConfigError, match="'f1' is not in this run; it scored: .*judge:match"):
        breakdown(run, "group_id", ["f1"])
    with pytest.raises(ConfigError, match="--bins needs a numeric field"):
        breakdown(run, "metadata.document_type", bins=2)


def test_missing_values_form_their_own_group(run):
    result = breakdown(run, "group_id", ["judge:match"])
    assert result.groups == [MISSING] and result.sizes == {MISSING: 3}


def test_cost_view_quality_tokens_saved_and_unknown_cost(run, frames):
    view = cost_view(run, "judge:match", baseline="bm25")
    assert view.metric == "judge:match" and view.baseline == "bm25"
    keyword, bm25 = view.rows
    assert bm25.tokens_saved is None and keyword.tokens_saved == 0
    assert keyword.quality == pytest.approx(frames.scores().loc["keyword"]["judge:match"].mean())
    assert keyword.cost_usd == 0.0 and keyword.quality_per_dollar is None and keyword.notes
    assert [s.system for s in view.latency] == ["keyword", "bm25"] and view.frontier.metric == "judge:match"
    priced = dataclasses.replace(run, outputs={k: _priced(o) for k, o in run.outputs.items()})
    view = cost_view(priced)
    keyword, bm25 = view.rows
    assert keyword.cost_usd is None and "no price for gpt-x" in keyword.notes[0]
    assert keyword.tokens_saved is None and bm25.tokens_saved == -600 and bm25.tokens_saved_share == -2.0
    assert bm25.quality_per_dollar == pytest.approx(bm25.quality / (1.5 / 3))
    assert view.frontier.dimensions == ["quality", "latency"] and "cost left out" in view.frontier.notes[0]
    with pytest.raises(ConfigError, match="--baseline 'nope' is not a system"):
        cost_view(run, baseline="nope")


def _priced(output):
    """keyword: 100 input tokens per answer from an unpriced model; bm25: 300 at $0.5 per answer."""
    if output.system == "keyword":
        usage = dataclasses.replace(output.usage, input_tokens=100, cost_usd=0.0, unpriced=("gpt-x",))
    else:
        usage = dataclasses.replace(output.usage, input_tokens=300, cost_usd=0.5)
    return dataclasses.replace(output, usage=usage)
