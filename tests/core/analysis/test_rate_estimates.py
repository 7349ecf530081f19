"""A prediction-powered share of correct answers stays in [0, 1], estimate and interval alike (issue 38, item 4)."""

from __future__ import annotations

import json

import pytest

from ragassay.analysis.meta_eval import ppi_mean

from conftest import ragassay_cli
from written_runs import write_run


def test_a_rate_estimate_outside_zero_one_is_moved_to_the_bound_and_says_from_where():
    # 3 labelled answers, all correct by the label; the judge called 2 of them wrong: rectifier -2/3
    unlabelled = [1.0] * 19 + [0.0] * 1  # the judge's mean 0.95 on the rest
    est = ppi_mean(unlabelled, [1.0, 0.0, 0.0], [1.0, 1.0, 1.0], rate=True)
    assert est.rectifier == pytest.approx(-2 / 3)
    assert est.clipped_from == pytest.approx(0.95 + 2 / 3)  # 1.617: what was printed before
    assert est.estimate == 1.0
    low, high = est.ci
    assert 0.0 <= low <= est.estimate <= high <= 1.0
    plain = ppi_mean(unlabelled, [1.0, 0.0, 0.0], [1.0, 1.0, 1.0])  # a mean, not a rate: left as it is
    assert plain.estimate == pytest.approx(0.95 + 2 / 3) and plain.clipped_from is None


def test_an_interval_wholly_beyond_a_bound_is_the_bound():
    # rectifier -1 on 2 labels with no spread: the interval is the point 1.95, wholly above 1
    est = ppi_mean([1.0] * 19 + [0.0], [0.0, 0.0], [1.0, 1.0], rate=True)
    assert est.clipped_from == pytest.approx(1.95) and est.estimate == 1.0 and est.ci[1] == 1.0
    assert est.ci[0] <= est.ci[1]  # never an inverted interval
    inside = ppi_mean([1.0] * 8 + [0.0] * 2, [1.0, 1.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], rate=True)
    assert inside.clipped_from is None and inside.estimate == pytest.approx(0.3)


@pytest.mark.slow
def test_meta_eval_prints_the_share_within_its_interval_and_says_it_was_moved(tmp_path):
    # the judge calls every even sample correct; 3 labels say "correct" where it said wrong twice
    cells = [{"judges": {"match": i % 2 == 0}} for i in range(12)]
    store, run_id = write_run(tmp_path / "results.db", {"base": cells, "other": cells})
    store.close()
    labels = tmp_path / "labels.csv"
    rows = "".join(f"q{i:03d},base,correct\n" for i in (0, 1, 3))
    labels.write_text("question_id,system,label\n" + rows, encoding="utf-8")
    db = str(tmp_path / "results.db")
    result = ragassay_cli("meta-eval", run_id, "--db", db, "--labels", str(labels), "--json")
    assert result.returncode == 0, result.stderr
    (row,) = [r for r in json.loads(result.stdout)["corrected"] if r["system"] == "base"]
    assert row["ppi_clipped_from"] == pytest.approx(5 / 9 + 2 / 3)  # judge 5 of 9 unlabelled, rectifier -2/3
    assert row["ppi_mean"] == 1.0 and row["ppi_low"] <= 1.0 == row["ppi_high"]
    text = ragassay_cli("meta-eval", run_id, "--db", db, "--labels", str(labels), "--format", "markdown")
    assert "1.000 [" in text.stdout and "1.222" in text.stdout and "lies outside [0, 1]" in text.stdout
