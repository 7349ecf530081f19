"""The gate's comparison (ragassay.analysis.gate) and its markdown (gate_summary) on real stored runs.

The runs are made by the real runner on a project on disk with the scripted testkit echo RAG (conftest).
"""

from __future__ import annotations

import pytest

from ragassay.analysis.gate import gate, parse_baseline, pick_baseline_run
from ragassay.analysis.gate_summary import markdown_summary, md
from ragassay.analysis.verdicts import holm
from ragassay.api import run
from ragassay.errors import ConfigError, DatasetError
from ragassay.store import open_store, store_url

from conftest import Testkit, write_project

QA = [
    {
        "question_id": f"q{i:02d}",
        "question": f"Question {i}?",
        "reference_answers": [f"answer{i} number{i}"],
        "reference_contexts": [f"context {i}"],
        "reference_context_ids": ["corpus/alpha.md"],
    }
    for i in range(20)
]
CONFIG = """
    [project]
    name = "g"
    results = "{db}"

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [systems.steady]
    rag = "testkit/echo"

    [systems.changing]
    rag = {{ name = "testkit/echo", options = {changing} }}
{extra}
    [evaluation]
    metrics = [{metrics}]
"""


def stored_run(root, *, changing="{}", extra="", metrics='"exact_match", "token_recall"', qa=QA, db="results.db"):
    """Run the project (candidate or baseline) and return (store, run id)."""
    config = write_project(root, CONFIG.format(db=db, changing=changing, extra=extra, metrics=metrics), qa=qa)
    summary = run(config, plugins=[("testkit", Testkit())])
    return open_store(store_url(db, root), create=False), summary.run_id


@pytest.fixture
def baseline(tmp_path):
    store, run_id = stored_run(tmp_path / "main")
    yield store, run_id
    store.close()


def test_worse_system_is_a_regression_and_holm_spans_every_system_and_metric(tmp_path, baseline):
    store, run_id = stored_run(tmp_path / "pr", changing='{ answer = "no idea" }')
    result = gate(store, run_id, *baseline)
    assert [(r.system, r.metric) for r in result.rows] == [
        ("steady", "exact_match"),
        ("steady", "token_recall"),
        ("changing", "exact_match"),
        ("changing", "token_recall"),
    ]
    assert [r.verdict for r in result.rows] == [
        "no detectable difference",
        "no detectable difference",
        "worse",
        "worse",
    ]
    assert result.exit_code == 1 and len(result.regressions) == 2 and len(result.compared) == 4
    worse = result.rows[2]
    assert worse.baseline_mean == 1.0 and worse.candidate_mean == 0.0 and worse.mean_diff == -1.0 and worse.n == 20
    # the four pairs form one Holm family, as in 'ragassay compare'
    raw = [1.0, 1.0, 1 / 10_001, 1 / 10_001]
    assert [r.p_holm for r in result.rows] == pytest.approx(holm(raw))
    store.close()


def test_equal_runs_pass_and_the_same_inputs_give_the_same_numbers(tmp_path, baseline):
    store, run_id = stored_run(tmp_path / "pr")
    first = gate(store, run_id, *baseline, seed=3)
    assert first.exit_code == 0 and not first.regressions and not first.notes
    assert first.as_dict() == gate(store, run_id, *baseline, seed=3).as_dict()
    store.close()


def test_failures_unscored_and_one_sided_samples_are_counted(tmp_path, baseline):
    extra_sample = {**QA[0], "question_id": "new-one"}
    store, run_id = stored_run(tmp_path / "pr", changing='{ fail_ids = ["q01", "q02"] }', qa=[*QA[1:], extra_sample])
    result = gate(store, run_id, *baseline)
    assert (result.shared_samples, result.candidate_only_samples, result.baseline_only_samples) == (19, 1, 1)
    health = {h.system: h for h in result.health}
    assert health["changing"].candidate_failed == 2 and health["changing"].baseline_failed == 0
    row = next(r for r in result.rows if r.system == "changing" and r.metric == "exact_match")
    assert row.n == 17  # 19 shared samples, two failed (no value) on the candidate side
    text = markdown_summary(result)
    assert "on 19 samples in both runs (1 only in the candidate, 1 only in the baseline: not compared)" in text
    assert "| changing | 0 → 2 |" in text
    store.close()


def test_one_sided_systems_and_metrics_are_reported_not_dropped(tmp_path, baseline):
    extra = '\n    [systems.newcomer]\n    rag = "testkit/echo"\n'
    store, run_id = stored_run(tmp_path / "pr", extra=extra, metrics='"exact_match", "contains_answer"')
    result = gate(store, run_id, *baseline)
    assert {r.metric for r in result.rows} == {"exact_match"}
    assert result.notes == [
        "system newcomer is new (not in the baseline run): not compared",
        "metric contains_answer is only in the candidate run: not compared",
        "metric token_recall is only in the baseline run: not compared",
    ]
    with pytest.raises(ConfigError, match="--metric nope: neither run has it"):
        gate(store, run_id, *baseline, metrics=["nope"])
    with pytest.raises(ConfigError, match="no metric or judge in common"):
        gate(store, run_id, *baseline, metrics=["contains_answer"])
    store.close()


def test_no_common_system_or_sample_is_an_error(tmp_path, baseline):
    other = [{**s, "question_id": f"x{s['question_id']}"} for s in QA]
    store, run_id = stored_run(tmp_path / "pr", qa=other)
    with pytest.raises(DatasetError, match="share no question_id"):
        gate(store, run_id, *baseline)
    store.close()
    renamed = CONFIG.replace("systems.steady", "systems.a").replace("systems.changing", "systems.b")
    config = write_project(tmp_path / "renamed", renamed.format(db="r.db", changing="{}", extra="", metrics=""))
    summary = run(config, plugins=[("testkit", Testkit())])
    store = open_store(store_url("r.db", tmp_path / "renamed"), create=False)
    with pytest.raises(ConfigError, match=r"no system of the candidate run \(a, b\) is in the baseline run"):
        gate(store, summary.run_id, *baseline)
    store.close()


def test_pick_baseline_run_prefers_the_same_fingerprint_then_the_project(tmp_path, baseline):
    base_store, base_id = baseline
    store, run_id = stored_run(tmp_path / "pr", changing='{ answer = "x" }')
    candidate = store.get_run(run_id)
    assert pick_baseline_run(base_store, candidate, None)["id"] == base_id  # same project, other fingerprint
    assert pick_baseline_run(store, candidate, None)["id"] == run_id  # same fingerprint
    assert pick_baseline_run(base_store, candidate, base_id[:5])["id"] == base_id
    with pytest.raises(ConfigError, match="has no run of project 'other'"):
        pick_baseline_run(base_store, {**candidate, "fingerprint": "-", "project": "other"}, None)
    store.close()


@pytest.mark.parametrize(
    ("value", "parsed"),
    [
        ("3fa9", (None, "3fa9")),
        ("main/results.db", ("main/results.db", None)),
        ("results.sqlite", ("results.sqlite", None)),
        ("cache/r.db#3fa9", ("cache/r.db", "3fa9")),
        ("postgresql+psycopg://me@db/results#3fa9", ("postgresql+psycopg://me@db/results", "3fa9")),
    ],
)
def test_parse_baseline(value, parsed):
    assert parse_baseline(value) == parsed


def test_markdown_escapes_user_strings():
    assert md("a|b") == "a\\|b" and md("`x`") == "\\`x\\`" and md("<b>&") == "&lt;b&gt;&amp;"
    assert md("token_recall") == "token_recall" and md("_em_ *s* [l]") == "\\_em\\_ \\*s\\* \\[l\\]"
    assert md("two\nlines") == "two lines"
