"""``assert_no_regression(..., labelled=RUBRIC, labels=...)``: the regression decided on people's labels."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.labels import Label, write_jsonl
from ragassay.notebook import Run
from ragassay.store import store_url
from ragassay.testing import assert_no_regression

from written_runs import RUN_ID, write_run

N, LABELLED = 40, 20


@pytest.fixture
def run(tmp_path):
    """Systems old and new: the metric rates both alike, people's labels say new is worse (0.9 -> 0.4)."""
    rng = np.random.default_rng(5)
    truth = {"old": rng.random(N) < 0.9, "new": rng.random(N) < 0.4}
    metric = {"old": truth["old"], "new": truth["new"] | (rng.random(N) < 0.5)}
    path = tmp_path / "r.db"
    store, _ = write_run(path, {s: [{"metrics": {"m": float(v)}} for v in metric[s]] for s in ("old", "new")})
    labels = [
        Label(run_id=RUN_ID, sample_id=f"q{i:03d}", system=s, rubric="correct", rubric_version=1, annotator="a",
              value=float(truth[s][i]), labelled_at=0.0)
        for i in range(LABELLED) for s in ("old", "new")
    ]  # fmt: skip
    store.add_labels(labels)
    store.close()
    return Run(RUN_ID, store_url(str(path), tmp_path)), labels, tmp_path


def test_people_labels_catch_the_regression_the_metric_misses(run):
    stored, labels, tmp_path = run
    with pytest.raises(AssertionError, match="regression on m decided on people's labels of correct"):
        assert_no_regression(stored, "old", "m", labelled="correct")
    path = tmp_path / "labels.jsonl"
    write_jsonl(labels, path)
    with pytest.raises(AssertionError, match=r"20 labelled of 40 samples"):
        assert_no_regression(stored, "old", "m", labelled="correct", labels=path)


def test_too_few_labels_are_inconclusive_and_pass_only_when_asked(run):
    stored, labels, _ = run
    few = labels[:2]  # one sample labelled on both sides
    with pytest.raises(AssertionError, match="undecided: 1 labels, need 2"):
        assert_no_regression(stored, "old", "m", labelled="correct", labels=few)
    assert_no_regression(stored, "old", "m", labelled="correct", labels=few, on_inconclusive="pass")
