"""The active labelling queue over a stored run (``ragassay label --order active``): each item's probability comes
from the judge's uncertainty about it (scores, repeats, a pair's two answers), every probability is positive and
they sum to the budget, the draw is the same for the same seed in every process, and bad choices are one clear
error (CLI exit 2)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ragassay.cli.main import cli
from ragassay.errors import ConfigError
from ragassay.labels import load_rubric
from ragassay.labels.queue import item_uncertainty, labelling_probabilities, run_items
from ragassay.results import read_run

from labels_helpers import RUN_ID, SYSTEMS, open_label_store, write_label_run

CORRECT = load_rubric("correct")
PREFERENCE = load_rubric("preference")
ACTIVE_RUN = "activerun-0003"


def unsure_on_every_fourth(k: int, i: int) -> float:
    """The judge is unsure (0.5) of every fourth sample's answers and sure (0.02 or 0.98) of the others."""
    return 0.5 if i % 4 == 0 else (0.02 if (i + k) % 2 else 0.98)


@pytest.fixture
def store(tmp_path):
    store = open_label_store(tmp_path / "results.db")
    write_label_run(store, ACTIVE_RUN, score=unsure_on_every_fourth)
    yield store
    store.close()


def test_uncertainty_of_scores_repeats_and_several_judges():
    assert item_uncertainty([0.5]) == 0.5 and item_uncertainty([1.0]) == 0.0
    assert math.isclose(item_uncertainty([0.9]), math.sqrt(0.09))
    assert item_uncertainty([1.0, 0.0]) == 0.5  # two judges (or repeats) that disagree: as unsure as can be
    assert item_uncertainty([]) == item_uncertainty([float("nan")]) == 0.5  # no score: treated as most uncertain


def test_probabilities_follow_the_uncertainty_keep_a_uniform_share_sum_to_the_budget_and_cap_at_one():
    probabilities = labelling_probabilities([0.0, 0.0, 0.5, 0.5], 2)
    assert probabilities[0] == probabilities[1] == pytest.approx(0.1 * 2 / 4)  # tau * budget / N
    assert math.isclose(sum(probabilities), 2) and probabilities[2] == probabilities[3] > probabilities[0]
    capped = labelling_probabilities([0.0] * 8 + [0.5], 4)
    assert capped[-1] == 1.0 and math.isclose(sum(capped), 4) and min(capped) > 0
    assert labelling_probabilities([0.1, 0.2], 5) == [1.0, 1.0]  # a budget beyond the items labels them all
    with pytest.raises(ValueError, match="budget"):
        labelling_probabilities([0.1], 0)


def test_an_active_queue_draws_unsure_answers_more_often_and_records_each_probability(store):
    run = read_run(store, ACTIVE_RUN)
    items = run_items(run, CORRECT, sample=12, seed=5, order="active")
    assert items == run_items(run, CORRECT, sample=12, seed=5, order="active")  # the seed decides
    assert items != run_items(run, CORRECT, sample=12, seed=6, order="active")
    unsure = [item.probability for item in items if int(item.sample_id[1:]) % 4 == 0]
    sure = [item.probability for item in items if int(item.sample_id[1:]) % 4 != 0]
    # 48 answers, 12 unsure: pi = 0.9 * 12 * u / sum(u) + 0.1 * 12 / 48
    total = 12 * 0.5 + 36 * math.sqrt(0.02 * 0.98)
    assert unsure and unsure == pytest.approx([0.9 * 12 * 0.5 / total + 0.025] * len(unsure))
    assert sure == pytest.approx([0.9 * 12 * math.sqrt(0.0196) / total + 0.025] * len(sure))
    assert len(unsure) > len(items) / 4  # over-represented: a quarter of the answers
    assert all(item.probability is None for item in run_items(run, CORRECT, sample=12, seed=5))  # random order


def test_a_pairs_uncertainty_is_that_of_its_paired_difference(store):
    items = run_items(read_run(store, ACTIVE_RUN), PREFERENCE, sample=6, seed=1, order="active")
    u_sure, u_unsure = math.sqrt(0.0196), 0.5
    total = 6 * math.sqrt(2) * u_unsure + 18 * math.sqrt(2) * u_sure  # 24 pairs
    for item in items:
        u = u_unsure if int(item.sample_id[1:]) % 4 == 0 else u_sure
        assert item.probability == pytest.approx(0.9 * 6 * math.sqrt(2) * u / total + 0.1 * 6 / 24)


def test_the_draw_is_the_same_in_another_process(store, tmp_path):
    here = [(i.sample_id, i.system, i.probability) for i in run_items(read_run(store, ACTIVE_RUN), CORRECT, sample=10,
                                                                          seed=9, order="active")]  # fmt: skip
    code = (
        "import sys; from ragassay.store import open_store; from ragassay.results import read_run; "
        "from ragassay.labels import load_rubric; from ragassay.labels.queue import run_items; "
        f"s = open_store(sys.argv[1]); r = read_run(s, '{ACTIVE_RUN}'); "
        "print([(i.sample_id, i.system, i.probability) for i in run_items(r, load_rubric('correct'), sample=10, "
        "seed=9, order='active')])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, f"sqlite:///{tmp_path / 'results.db'}"], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == repr(here)


def test_bad_choices_are_one_clear_error(store, tmp_path):
    run = read_run(store, ACTIVE_RUN)
    with pytest.raises(ConfigError, match="--order active needs --sample N"):
        run_items(run, CORRECT, sample=None, seed=0, order="active")
    with pytest.raises(ConfigError, match="no judge 'nope' \\(its judges: match\\)"):
        run_items(run, CORRECT, sample=5, seed=0, order="active", judges=["nope"])
    with pytest.raises(ConfigError, match="unknown queue order 'best'"):
        run_items(run, CORRECT, sample=5, seed=0, order="best")
    db = ["--db", str(tmp_path / "results.db"), "--rubric", "correct", "--annotator", "a"]
    result = CliRunner().invoke(cli, ["label", RUN_ID, *db, "--order", "active"])
    assert result.exit_code == 2 and "--order active needs --sample N" in result.output
    result = CliRunner().invoke(cli, ["label", RUN_ID, *db, "--judge", "match"])
    assert result.exit_code == 2 and "add --order active" in result.output
    assert SYSTEMS[0] not in result.output
    result = CliRunner().invoke(cli, ["label", RUN_ID, *db, "--order", "active", "--sample", "5", "--judge", "nope"])
    assert result.exit_code == 2 and "--judge: the run has no judge 'nope'" in result.output
