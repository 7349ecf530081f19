"""The gate's comparison (ragassay.analysis.gate) and its markdown (gate_summary) on real stored runs.

The runs are made by the real runner on a project on disk with the scripted testkit echo RAG (conftest).
"""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.gate import GateSettings, gate, gate_rows, parse_baseline
from ragassay.analysis.gate_summary import markdown_summary, md
from ragassay.api import run
from ragassay.errors import ConfigError, DatasetError
from ragassay.results import read_run
from ragassay.results.read import pick_baseline
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
    """Run the project (candidate or baseline) and return it read (:class:`ragassay.results.RunData`)."""
    config = write_project(root, CONFIG.format(db=db, changing=changing, extra=extra, metrics=metrics), qa=qa)
    summary = run(config, plugins=[("testkit", Testkit())])
    store = open_store(store_url(db, root), create=False)
    try:
        return read_run(store, summary.run_id)
    finally:
        store.close()


@pytest.fixture
def baseline(tmp_path):
    return stored_run(tmp_path / "main")


DEFAULT = GateSettings()


def test_a_worse_system_is_a_regression_and_an_unchanged_one_passes(tmp_path, baseline):
    candidate = stored_run(tmp_path / "pr", changing='{ answer = "no idea" }')
    result = gate(candidate, baseline, DEFAULT)
    assert [(r.system, r.metric) for r in result.rows] == [
        ("steady", "exact_match"),
        ("steady", "token_recall"),
        ("changing", "exact_match"),
        ("changing", "token_recall"),
    ]
    assert [r.outcome for r in result.rows] == ["pass", "pass", "regression", "regression"]
    assert result.exit_code == 1 and len(result.regressions) == 2 and not result.inconclusive
    worse = result.rows[2]
    assert worse.baseline_mean == 1.0 and worse.candidate_mean == 0.0 and worse.mean_diff == -1.0 and worse.n == 20
    assert worse.ci_high < -worse.margin and worse.margin == pytest.approx(0.02) and worse.n_discordant == 20
    steady = result.rows[0]
    assert steady.ci_low == steady.ci_high == 0.0 and steady.mean_diff == 0.0  # equal on every sample: shown within
    superiority = gate(candidate, baseline, GateSettings(mode="superiority"))
    assert [r.outcome for r in superiority.rows] == ["pass", "pass", "regression", "regression"]


def test_equal_runs_pass_and_the_same_inputs_give_the_same_numbers(tmp_path, baseline):
    candidate = stored_run(tmp_path / "pr")
    first = gate(candidate, baseline, GateSettings(seed=3))
    assert first.exit_code == 0 and not first.regressions and not first.rows  # every metric 1.0 on both sides
    assert first.notes == [
        "left out, the same value on every system and sample of both runs: exact_match, token_recall"
    ]
    declared = gate(candidate, baseline, GateSettings(seed=3, family=["exact_match", "token_recall"]))
    assert {r.outcome for r in declared.rows} == {"pass"} and declared.exit_code == 0
    assert first.as_dict() == gate(candidate, baseline, GateSettings(seed=3)).as_dict()


def test_a_few_wrong_answers_are_inconclusive_and_fail_unless_told_to_pass(tmp_path, baseline):
    candidate = stored_run(tmp_path / "pr", changing='{ wrong_ids = ["q00", "q01", "q02", "q03"] }')
    settings = GateSettings(family=["exact_match"])
    result = gate(candidate, baseline, settings)
    row = next(r for r in result.rows if r.system == "changing")
    assert row.outcome == "inconclusive" and row.n_discordant == 4 and row.mean_diff == pytest.approx(-0.2)
    assert row.ci_low < -row.margin and row.ci_high == 0.0 and row.needed > 20
    assert result.exit_code == 1 and result.failing == [row]
    assert gate(candidate, baseline, GateSettings(family=["exact_match"], on_inconclusive="pass")).exit_code == 0
    assert gate(candidate, baseline, GateSettings(family=["exact_match"], mode="superiority")).exit_code == 0
    text = markdown_summary(result)
    assert (
        "## ❌ ragassay gate: 1 inconclusive in 2 comparisons" in text
        and "### Inconclusive (these fail the gate)" in text
    )
    assert "**changing** on **exact\\_match**" in text or "**changing** on **exact_match**" in text
    assert "samples would settle it" in text and "Mode **non-inferiority**" in text and "margin 0.02" in text


def test_a_noisy_system_against_itself_is_never_shown_worse():
    rng = np.random.default_rng(0)
    outcomes = []
    for trial in range(200):
        base = rng.integers(0, 2, 12).astype(float)
        cand = rng.integers(0, 2, 12).astype(float)  # the same system: a fresh draw of the same coin
        keys = [("s", "m")]
        rows = gate_rows(keys, {keys[0]: base}, {keys[0]: cand}, {"m": "higher"}, {"m": 0.02}, GateSettings(seed=trial))
        outcomes.append(rows[0].outcome)
    assert outcomes.count("regression") <= 0.05 * len(outcomes)  # the test's level, not more
    assert outcomes.count("inconclusive") > 0.8 * len(outcomes)  # 12 samples cannot show a 2-point margin


def test_failures_unscored_and_one_sided_samples_are_counted(tmp_path, baseline):
    extra_sample = {**QA[0], "question_id": "new-one"}
    candidate = stored_run(tmp_path / "pr", changing='{ fail_ids = ["q01", "q02"] }', qa=[*QA[1:], extra_sample])
    result = gate(candidate, baseline, GateSettings(family=["exact_match"]))
    assert (result.shared_samples, result.candidate_only_samples, result.baseline_only_samples) == (19, 1, 1)
    health = {h.system: h for h in result.health}
    assert health["changing"].candidate_failed == 2 and health["changing"].baseline_failed == 0
    row = next(r for r in result.rows if r.system == "changing" and r.metric == "exact_match")
    assert row.n == 17  # 19 shared samples, two failed (no value) on the candidate side
    text = markdown_summary(result)
    assert "on 19 samples in both runs (1 only in the candidate, 1 only in the baseline: not compared)" in text
    assert "| changing | 0 → 2 |" in text


def test_one_sided_systems_and_metrics_are_reported_not_dropped(tmp_path, baseline):
    extra = '\n    [systems.newcomer]\n    rag = "testkit/echo"\n'
    candidate = stored_run(tmp_path / "pr", extra=extra, metrics='"exact_match", "contains_answer"')
    result = gate(candidate, baseline, GateSettings(family=["exact_match", "contains_answer", "token_recall"]))
    assert {r.metric for r in result.rows} == {"exact_match"}
    assert result.notes == [
        "system newcomer is new (not in the baseline run): not compared",
        "metric contains_answer is only in the candidate run: not compared",
        "metric token_recall is only in the baseline run: not compared",
    ]
    with pytest.raises(ConfigError, match="decision family names nope, which neither run scored"):
        gate(candidate, baseline, GateSettings(family=["nope"]))
    with pytest.raises(ConfigError, match="no metric or judge in common"):
        gate(candidate, baseline, GateSettings(family=["contains_answer"]))


def test_no_common_system_or_sample_is_an_error(tmp_path, baseline):
    other = [{**s, "question_id": f"x{s['question_id']}"} for s in QA]
    candidate = stored_run(tmp_path / "pr", qa=other)
    with pytest.raises(DatasetError, match="share no question_id"):
        gate(candidate, baseline, DEFAULT)
    renamed = CONFIG.replace("systems.steady", "systems.a").replace("systems.changing", "systems.b")
    config = write_project(tmp_path / "renamed", renamed.format(db="r.db", changing="{}", extra="", metrics=""))
    summary = run(config, plugins=[("testkit", Testkit())])
    store = open_store(store_url("r.db", tmp_path / "renamed"), create=False)
    try:
        candidate = read_run(store, summary.run_id)
    finally:
        store.close()
    with pytest.raises(ConfigError, match=r"no system of the candidate run \(a, b\) is in the baseline run"):
        gate(candidate, baseline, DEFAULT)


def test_an_open_range_needs_its_own_margin(tmp_path, baseline):
    import dataclasses

    spec = {**baseline.info.spec, "metrics": {"token_recall": {"traits": {"value_range": [0.0, None]}}}}
    open_range = dataclasses.replace(baseline, info=dataclasses.replace(baseline.info, spec=spec))
    with pytest.raises(ConfigError, match="token_recall has an open range.*margins = \\{ token_recall = 0.1 \\}"):
        gate(open_range, baseline, GateSettings(family=["token_recall"]))
    assert gate(open_range, baseline, GateSettings(family=["token_recall"], margins={"token_recall": 0.1})).rows


def test_pick_baseline_prefers_the_same_fingerprint_then_the_project(tmp_path):
    base_root, pr_root = tmp_path / "main", tmp_path / "pr"
    base = stored_run(base_root)
    cand = stored_run(pr_root, changing='{ answer = "x" }')
    base_store = open_store(store_url("results.db", base_root), create=False)
    store = open_store(store_url("results.db", pr_root), create=False)
    try:
        info = cand.info
        assert pick_baseline(base_store, info.fingerprint, info.project, None)["id"] == base.id  # same project
        assert pick_baseline(store, info.fingerprint, info.project, None)["id"] == cand.id  # same fingerprint
        assert pick_baseline(base_store, info.fingerprint, info.project, base.id[:5])["id"] == base.id
        with pytest.raises(ConfigError, match="has no run of project 'other'"):
            pick_baseline(base_store, "-", "other", None)
    finally:
        store.close()
        base_store.close()


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
