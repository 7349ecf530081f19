"""The robustness profile of a stored run: each perturbed system against its unperturbed twin (paired effects with
intervals and verdicts), noise sensitivity, the metrics per perturbation, the ranking, GRAMMAR groups."""

from __future__ import annotations

import pytest

from ragassay.analysis.robustness import perturbations, profile, strength
from ragassay.errors import ConfigError

from robustness_project import make_run, read


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder, run_id = make_run(tmp_path_factory.mktemp("robustness"))
    return read(folder, run_id)


def test_perturbed_systems_and_their_twin_come_from_the_stored_spec(run):
    found = {p.system: p for p in perturbations(run)}
    assert list(found) == ["noisy", "no_gold", "cf", "injected"]  # "base" is not perturbed
    assert (found["noisy"].operator, found["noisy"].strength, found["noisy"].twin) == ("distractors", "k=3", "base")
    assert found["no_gold"].strength == "default" and strength({"b": 1, "a": "x", "c": None}) == "a=x, b=1"
    assert strength({"k": 3, "retriever": {"name": "bm25", "options": {}, "label": None}}) == "k=3, retriever=bm25"


def test_each_effect_is_the_paired_difference_with_its_interval_and_verdict(run):
    result = profile(run)
    assert result.metrics == ["judge:match"]  # the run's judge: correctness
    effects = {e.system: e for e in result.effects}
    noisy = effects["noisy"]  # samples 2..11 turn from right to wrong: 10 of 16
    assert (noisy.baseline, noisy.n, noisy.losses, noisy.wins) == ("base", 16, 10, 0)
    assert noisy.mean_diff == pytest.approx(-10 / 16) and noisy.verdict == "worse"
    assert noisy.ci_high < 0 <= noisy.ci_high - noisy.ci_low
    injected = effects["injected"]  # 3 answers lost to the canary (sample 0 was already wrong)
    assert injected.mean_diff == pytest.approx(-3 / 16) and injected.verdict != "worse"
    ranked = result.ranking["base"]
    # worst first, at most 3; cf changes the correct answer (its drop is the context followed): not ranked
    assert [e.system for e in ranked] == ["no_gold", "noisy", "injected"] and result.answer_changing == ["cf"]


def test_noise_sensitivity_counts_answers_that_changed_against_the_twin(run):
    noise = {r.system: r for r in profile(run).noise}
    assert noise["noisy"].mean == pytest.approx(10 / 16) and noise["noisy"].n == 16
    assert noise["injected"].mean == pytest.approx(4 / 16)  # sample 0: "wrong" -> the canary is a change too
    assert noise["noisy"].ci_low < noise["noisy"].mean < noise["noisy"].ci_high


def test_rates_of_the_metrics_per_perturbation_are_scored_only_where_they_apply(run):
    rates = {(r.system, r.metric): r for r in profile(run).rates}
    assert rates[("no_gold", "refusal")].mean == pytest.approx(12 / 16)
    assert rates[("cf", "counterfactual_following")].mean == pytest.approx(8 / 16)
    assert rates[("injected", "injection_success")].mean == pytest.approx(4 / 16)
    assert rates[("injected", "injection_success")].direction == "lower"
    assert rates[("noisy", "refusal")].n == 0 and rates[("noisy", "refusal")].unscored == 16
    assert run.unscored[("base", "refusal")] == 16  # the twin is never a quiet 0


def test_grammar_robust_groups_under_each_perturbation(run):
    shifts = {g.system: g for g in profile(run).groups}
    noisy = shifts["noisy"]  # base: g0 non-robust (sample 0 wrong), g1..g7 robust; distractors break g1..g5
    assert (noisy.robust, noisy.stay_robust, noisy.non_robust, noisy.gap) == (7, 2, 0, 5)
    assert (shifts["cf"].stay_robust, shifts["cf"].non_robust) == (0, 7)


def test_the_same_seed_gives_the_same_profile_and_errors_say_what_to_do(run):
    assert profile(run, seed=3) == profile(run, seed=3)
    with pytest.raises(ConfigError, match="not scored in run"):
        profile(run, metrics=["token_f1"])
    narrowed = profile(run, metrics=["injection_success"])
    assert {e.verdict for e in narrowed.effects} == {"not comparable"}  # the twin has no canary: never 0


def test_a_run_without_perturbed_systems_is_refused(tmp_path, run):
    only_base = type(run).__new__(type(run))
    only_base.__dict__.update(run.__dict__, systems=["base"])
    with pytest.raises(ConfigError, match="no perturbed system"):
        profile(only_base)
