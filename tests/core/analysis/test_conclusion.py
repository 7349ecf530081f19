"""The conclusion a report opens with (issue 38, item 13): what is shown better or worse and by how much, what
cannot be decided and how many samples would settle it (grouped, not one line per metric), and which module to
fix first, from the verdicts, a sequential run's decisions, the gate's outcomes and the GRAMMAR blame."""

from __future__ import annotations

import numpy as np
import pytest

from ragassay.analysis.conclusion import Blamed, conclude, from_sequential, from_verdicts, run_conclusion
from ragassay.analysis.power import samples_needed
from ragassay.analysis.sentences import verdict_sentences
from ragassay.analysis.verdicts import decide_values

METRICS = ["token_recall", "contains_answer", "context_mrr", "recall_at_k", "judge:match"]
IDS = [f"q{i:02d}" for i in range(32)]


def issue_example():
    """The issue's project: 32 questions, 3 systems; bm25 and top1 differ from keyword on 0 to 2 samples per
    metric, so no comparison can reach the level."""
    keyword = {m: dict.fromkeys(IDS, 1.0) for m in METRICS}
    values = {("keyword", m): column for m, column in keyword.items()}
    for k, m in enumerate(METRICS):
        values[("bm25", m)] = keyword[m] | ({IDS[k]: 0.0} if k % 2 else {})
        values[("top1", m)] = keyword[m] | {IDS[k]: 0.0, IDS[k + 10]: 0.0}
    return decide_values(values, ["keyword", "bm25", "top1"], METRICS, {})


def _conclusion(verdicts, **options):
    return conclude(from_verdicts(verdicts), f"{verdicts.baseline} (baseline)", 32, **options)


def test_the_issue_example_concludes_in_a_few_different_sentences():
    sentences = _conclusion(issue_example()).sentences
    assert sentences[0] == "Nothing is shown better or worse than keyword (baseline) on these 32 samples."
    assert len(sentences) == 3 and len({s[:25] for s in sentences}) == 3  # no near-identical lines
    equal = "Equal to keyword (baseline) on every sample: bm25 on token_recall, context_mrr and judge:match."
    assert sentences[1] == equal
    (undecided,) = [s for s in sentences if s.startswith("Cannot be decided yet")]
    assert "(too few samples differ: 1 to 2 of 32)" in undecided
    assert ": top1 on token_recall, contains_answer, context_mrr, recall_at_k and judge:match; bm25 on " in undecided
    assert "samples would settle them" in undecided


def test_the_verdicts_say_too_few_once_not_once_per_metric():
    lines = verdict_sentences(issue_example())
    assert sum("Too few differing samples" in line for line in lines) == 1
    assert sum(line.startswith("No difference between bm25") for line in lines) == 1


def test_the_samples_that_would_settle_it_are_the_power_figure_at_the_familys_level():
    verdicts = issue_example()
    conclusion = _conclusion(verdicts)
    family = [p for p in verdicts.pairs if p.metric in verdicts.family]
    level = verdicts.alpha / len(family)
    pair = next(p for p in family if (p.system, p.metric) == ("top1", "recall_at_k"))
    keyword = np.ones(32)
    top1 = keyword.copy()
    top1[[3, 13]] = 0.0
    differences = top1 - keyword
    expected = samples_needed(float(np.std(differences, ddof=1)), abs(differences.mean()), level, 0.8)[0]
    item = next(c for c in conclusion.undecided if (c.system, c.metric) == (pair.system, pair.metric))
    assert item.needed == expected and expected > 32
    low, high = conclusion.needed
    assert low <= expected <= high and f"{low:,}" in conclusion.sentences[-1]


def test_shown_differences_come_with_how_much_and_their_interval():
    rng = np.random.default_rng(3)
    base = rng.random(32)
    values = {("a", "m"): dict(zip(IDS, base)), ("b", "m"): dict(zip(IDS, base + 0.2))}
    values |= {("c", "m"): dict(zip(IDS, base - 0.1 - rng.random(32) * 0.01))}
    verdicts = decide_values(values, ["a", "b", "c"], ["m"], {})
    sentences = _conclusion(verdicts).sentences
    better = next(p for p in verdicts.pairs if p.system == "b")
    assert sentences[0].startswith(f"Shown better than a (baseline): b on m by {better.mean_diff:+.3f} (")
    assert f"CI {better.ci_low:+.3f} to {better.ci_high:+.3f})" in sentences[0]
    assert sentences[1].startswith("Shown worse than a (baseline): c on m by -0.10")
    assert not any(s.startswith("Nothing is shown") for s in sentences)


def test_the_module_to_fix_first_is_the_one_most_wrong_answers_are_blamed_on():
    blame = [
        Blamed("keyword", lm=16, retrieval=0, undetermined=0, method="by reference documents"),
        Blamed("top1", lm=3, retrieval=8, undetermined=2, method="by reference documents"),
        Blamed("bm25", lm=4, retrieval=4, undetermined=0, method="by reference documents"),  # even: no advice
    ]
    sentences = _conclusion(issue_example(), blame=blame).sentences
    assert sentences[-1] == (
        "Fix first: retrieval, blamed for most wrong answers of top1 (8 of 11); the language model, for keyword "
        "(16 of 16) (GRAMMAR blame by reference documents)."
    )
    assert not any(s.startswith("Fix first") for s in _conclusion(issue_example()).sentences)


class _Row:
    def __init__(self, system, decision, at, gain):
        self.system, self.metric, self.decision, self.settled_at, self.n = system, "judge:match", decision, at, at
        self.mean_gain, self.ci_low, self.ci_high, self.level = gain, gain - 0.3, gain + 0.3, 0.025


class _Outcome:
    rows = [_Row("b", "better", 20, 0.5), _Row("c", "not settled", 80, 0.02)]


def test_a_sequential_run_concludes_from_its_anytime_valid_decisions():
    sentences = conclude(from_sequential(_Outcome()), "a (baseline)", 80).sentences
    assert sentences[0] == (
        "Shown better than a (baseline): b on judge:match by +0.500 (97.5% confidence sequence +0.200 to +0.800)."
    )
    assert sentences[1] == (
        "Cannot be decided yet (not settled at the maximum sample count): c on judge:match. A larger max_samples, "
        "or a full run, may settle it."
    )


@pytest.mark.parametrize("note", ["partial: 10 of 32 samples, a uniform random subset (seed 42); interrupted"])
def test_a_partial_run_says_first_what_it_stands_on(note):
    sentences = _conclusion(issue_example(), note=note).sentences
    assert sentences[0] == "Partial: 10 of 32 samples, a uniform random subset (seed 42); interrupted."


class _Part:
    def __init__(self, verdicts):
        self.verdicts, self.sequential = verdicts, None


def test_one_system_says_there_is_nothing_to_compare_it_with():
    verdicts = decide_values({("only", "m"): dict.fromkeys(IDS, 0.5)}, ["only"], ["m"], {})
    assert run_conclusion(_Part(verdicts)).sentences == [
        "One system, only: nothing to compare it with (its means are in the comparison)."
    ]
