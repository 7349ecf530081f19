"""``compare RUN --labelled METRIC=RUBRIC --sequential``: on a small stored run with people's labels of a binary
rubric (a random half of the samples), the printed anytime-valid interval and settling point are the confidence
sequence computed here from the stored values with :mod:`ragassay.analysis.sequential` itself; bad use is exit 2."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from ragassay.analysis.sequential import bounds, settle
from ragassay.cli.main import cli
from ragassay.labels import Label
from ragassay.sampling import seeded_order

from written_runs import RUN_ID, write_run

SAMPLES, LABELLED, ALPHA = 160, 80, 0.05


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"COLUMNS": "80"})


def planted():
    """People's 0/1 judgements of a and b (b right far more often), a judge that errs more on a, and which samples
    the people labelled (a seeded uniform half, both answers)."""
    rng = np.random.default_rng(11)
    y = {"a": (rng.random(SAMPLES) < 0.3) * 1.0, "b": (rng.random(SAMPLES) < 0.9) * 1.0}
    flip = {"a": rng.random(SAMPLES) < 0.2, "b": rng.random(SAMPLES) < 0.05}
    f = {s: np.where(flip[s], 1 - y[s], y[s]) for s in y}
    chosen = np.zeros(SAMPLES, bool)
    chosen[rng.choice(SAMPLES, LABELLED, replace=False)] = True
    return y, f, chosen


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("ppiseq") / "results.db"
    y, f, chosen = planted()
    systems = {s: [{"metrics": {"m": float(f[s][i])}} for i in range(SAMPLES)] for s in ("a", "b")}
    store, _ = write_run(path, systems)
    store.add_labels(
        [
            Label(
                run_id=RUN_ID,
                sample_id=f"q{i:03d}",
                system=s,
                rubric="correct",
                value=y[s][i],
                rubric_version=1,
                annotator="ann",
                labelled_at=float(i),
            )
            for i in np.flatnonzero(chosen)
            for s in ("a", "b")
        ]  # fmt: skip
    )
    store.close()
    return str(path)


def expected():
    """The sequence straight from the planted values: terms f + (xi / pi)(y - f) with pi = n / N in the seeded
    order of seed 0, bound 2 / pi - 1 (|f|, |y| <= 1), a family of one at alpha."""
    y, f, chosen = planted()
    order = seeded_order(0, [f"q{i:03d}" for i in range(SAMPLES)])
    pi = LABELLED / SAMPLES
    fd, yd, xi = (f["b"] - f["a"])[order], (y["b"] - y["a"])[order], chosen[order]
    phi = fd + np.where(xi, (yd - fd) / pi, 0.0)
    width = 2 / pi - 1
    low, high = bounds(phi, width, ALPHA, SAMPLES)
    paths = settle(phi, width, ALPHA, 1)
    at = int(paths.settled_at[0])
    return phi.mean(), low, high, paths.decisions[0], at, int(xi[:at].sum())


def test_the_printed_sequence_is_sequential_py_on_the_stored_values(db):
    mean, low, high, decision, at, labels_at = expected()
    assert decision == "better" and at < SAMPLES  # the planted difference is large enough to settle early
    result = invoke("compare", "--db", db, RUN_ID, "--labelled", "m=correct", "--sequential", "--format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["ppi_sequential"]
    assert (row["ci_low"], row["ci_high"], row["estimate"]) == pytest.approx((low, high, mean))
    assert (row["decision"], row["settled_at"], row["labels_at"]) == (decision, at, labels_at)
    assert (row["n"], row["labelled"], row["design"], row["pi_min"]) == (SAMPLES, LABELLED, "random", 0.5)
    assert row["ppi_low"] is not None and row["ppi_high"] - row["ppi_low"] < high - low  # fixed-n is narrower
    rich = invoke("compare", "--db", db, RUN_ID, "--labelled", "m=correct", "--sequential")
    assert rich.exit_code == 0, rich.output
    text = " ".join(rich.output.split())
    assert f"better at {at} ({labels_at} labels) of {SAMPLES} samples" in text
    assert f"confidence sequence over every sample {mean:+.3f} [{low:+.3f}, {high:+.3f}]" in text
    assert all(len(line) <= 80 for line in rich.output.splitlines())
    csv = invoke("compare", "--db", db, RUN_ID, "--labelled", "m=correct", "--sequential", "--format", "csv",
                 "--table", "ppi-sequential")  # fmt: skip
    assert csv.exit_code == 0 and {"ci_low", "settled_at", "labels_at", "ppi_low"} <= set(
        csv.stdout.split()[0].split(",")
    )


def test_sequential_without_labelled_is_exit_2(db):
    result = invoke("compare", "--db", db, RUN_ID, "--sequential")
    assert result.exit_code == 2 and "give --labelled METRIC=RUBRIC" in result.output
