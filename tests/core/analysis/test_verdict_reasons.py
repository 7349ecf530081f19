"""Why a pair has no verdict, in words that are true for the config (issue 38, items 9 and 13): a metric left out
because it is constant says so (not "not in [evaluation] decide" in a config without that key), and a pair with
too few differing samples gives its counts without repeating its verdict."""

from __future__ import annotations

from ragassay.analysis.verdicts import TOO_FEW, UNDECIDED, decide_values

IDS = [f"q{i}" for i in range(30)]


def _values():
    """Two systems on 30 samples: ``flat`` is 0 everywhere (constant), ``score`` differs on 2 samples."""
    flat = {(s, "flat"): dict.fromkeys(IDS, 0.0) for s in ("a", "b")}
    score = {("a", "score"): dict.fromkeys(IDS, 0.5), ("b", "score"): dict.fromkeys(IDS, 0.5) | {"q0": 1, "q1": 1}}
    return flat | score


def test_a_constant_metric_left_out_of_the_default_family_says_why():
    verdicts = decide_values(_values(), ["a", "b"], ["flat", "score"], {})
    (flat,) = [p for p in verdicts.pairs if p.metric == "flat"]
    assert verdicts.family == ["score"] and flat.verdict == UNDECIDED
    assert "equal on every system and sample" in flat.reason and "[evaluation] decide" not in flat.reason


def test_a_metric_left_out_of_a_declared_family_names_the_declaration():
    verdicts = decide_values(_values(), ["a", "b"], ["flat", "score"], {}, family=["flat"])
    (score,) = [p for p in verdicts.pairs if p.metric == "score"]
    assert score.verdict == UNDECIDED and "[evaluation] decide" in score.reason


def test_too_few_differing_samples_is_said_once():
    verdicts = decide_values(_values(), ["a", "b"], ["flat", "score"], {})
    (score,) = [p for p in verdicts.pairs if p.metric == "score"]
    assert score.verdict == TOO_FEW and score.n_discordant == 2
    assert "too few" not in score.reason and score.reason.startswith("differ on 2 of 30 samples")
