"""Active labelling (``ragassay label --order active``) in a seeded simulation: the labels an active queue draws,
weighted by their stored probabilities (:func:`ragassay.analysis.ppi.ppi_active_mean`; Zrnic and Candes, "Active
statistical inference", ICML 2024), give an interval as narrow as n labels drawn at random
(:func:`ragassay.analysis.ppi.ppi_mean`) with 0.75 n labels, and it still covers the truth at the nominal rate.

The simulated judge is calibrated and its confidence varies across items, as an LLM judge's does: on three items in
four (the easy ones) it says "correct" or "incorrect" with probability p near 0 or 1 (p ~ Beta(1, 40), mirrored
for half of them), and on the hard quarter it is unsure (p uniform on [0.25, 0.75]). The person's label is 1 with
probability p (calibration). Why active helps here: a label corrects the judge by Y - p, whose variance is
p (1 - p); on an easy item that is about 0.02, on a hard one about 0.23, so one label on a hard item removes ten
times as much error as one on an easy item. Drawing items with probability proportional to sqrt(p (1 - p)) (the
optimal rule of Zrnic and Candes, section 3), mixed with 10% uniform so every item can be drawn, spends most of
the budget on the hard quarter; the 1 / pi weights keep the estimate unbiased. Were the judge equally sure of
every item, the probabilities would be uniform and active ordering would equal random ordering.

Each of the 1,000 draws makes a new population (600 items) and a new labelled subset, so coverage is of the
population mean E[Y] = 0.5 (the mirroring makes it exact). The queue's own draw (:func:`choose_items`) picks the
active subset, so the test measures what ``ragassay label --order active`` does.
"""

from __future__ import annotations

import math

import numpy as np

from ragassay.analysis.ppi import ppi_active_mean, ppi_mean
from ragassay.labels import load_rubric
from ragassay.labels.queue import choose_items, item_uncertainty, labelling_probabilities

ITEMS, RANDOM_LABELS, DRAWS = 600, 120, 1_000
ACTIVE_BUDGET = int(0.75 * RANDOM_LABELS)  # 90
TRUE_MEAN = 0.5
NOMINAL = 0.95
MC_TOLERANCE = 3 * math.sqrt(NOMINAL * (1 - NOMINAL) / DRAWS)  # three Monte Carlo standard errors: 0.021
CORRECT = load_rubric("correct")
SAMPLES = [f"s{i:03d}" for i in range(ITEMS)]


def population(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A calibrated judge's probabilities p (confident on easy items, unsure on hard ones) and people's labels."""
    hard = rng.random(ITEMS) < 0.25
    p = np.where(hard, rng.uniform(0.25, 0.75, ITEMS), rng.beta(1, 40, ITEMS))
    p = np.where(~hard & (rng.random(ITEMS) < 0.5), 1 - p, p)
    return p, (rng.random(ITEMS) < p).astype(float)


def active_draw(p: np.ndarray, seed: int) -> tuple[list[float | None], list[float]]:
    """Which items the active queue draws (the queue's own code) and every item's labelling probability."""
    doubt = {("judge", s): item_uncertainty([float(v)]) for s, v in zip(SAMPLES, p)}
    answered = [("judge", s) for s in SAMPLES]
    queue = choose_items(
        answered, SAMPLES, ["judge"], CORRECT, sample=ACTIVE_BUDGET, seed=seed, order="active", uncertainty=doubt
    )
    probabilities = labelling_probabilities([doubt[("judge", s)] for s in SAMPLES], ACTIVE_BUDGET)
    drawn = {item.sample_id: item.probability for item in queue}
    assert all(drawn[s] == probabilities[i] for i, s in enumerate(SAMPLES) if s in drawn)  # stored = used
    return [1.0 if s in drawn else None for s in SAMPLES], probabilities


def test_active_order_reaches_the_width_of_n_random_labels_with_three_quarters_of_them_and_keeps_coverage():
    widths = {"random": [], "active": []}
    covered = {"random": 0, "active": 0}
    drawn_counts = []
    for seed in range(DRAWS):
        rng = np.random.default_rng(seed)
        p, y = population(rng)
        order = rng.permutation(ITEMS)
        labelled, rest = order[:RANDOM_LABELS], order[RANDOM_LABELS:]
        random_result = ppi_mean(y[labelled].tolist(), p[labelled].tolist(), p[rest].tolist())
        marks, probabilities = active_draw(p, seed)
        truth = [float(y[i]) if mark is not None else None for i, mark in enumerate(marks)]
        active_result = ppi_active_mean(p.tolist(), truth, probabilities)
        drawn_counts.append(sum(mark is not None for mark in marks))
        for name, result in (("random", random_result), ("active", active_result)):
            widths[name].append(result.width)
            covered[name] += result.low <= TRUE_MEAN <= result.high
    random_width, active_width = float(np.mean(widths["random"])), float(np.mean(widths["active"]))
    mean_drawn = float(np.mean(drawn_counts))
    print(
        f"random {RANDOM_LABELS} labels: width {random_width:.4f}, coverage {covered['random'] / DRAWS:.3f}; "
        f"active {mean_drawn:.1f} labels: width {active_width:.4f}, coverage {covered['active'] / DRAWS:.3f}"
    )
    assert abs(mean_drawn - ACTIVE_BUDGET) < 1.5  # the draw spends the budget it was given, on average
    assert active_width <= random_width  # 0.75 n active labels are at least as good as n random ones
    for name in ("random", "active"):
        assert abs(covered[name] / DRAWS - NOMINAL) <= MC_TOLERANCE, (name, covered[name] / DRAWS)


def test_without_varying_confidence_active_probabilities_are_uniform():
    """The control: a judge equally unsure of every item gets every item the same probability (no gain to be had),
    and one sure of most items gives the unsure ones most of the budget."""
    flat = labelling_probabilities([0.3] * ITEMS, ACTIVE_BUDGET)
    assert max(flat) - min(flat) < 1e-12 and math.isclose(sum(flat), ACTIVE_BUDGET)
    p, _ = population(np.random.default_rng(0))
    varied = np.array(labelling_probabilities([item_uncertainty([v]) for v in p], ACTIVE_BUDGET))
    unsure = np.sqrt(p * (1 - p)) > 0.4
    assert varied[unsure].sum() > 1.5 * unsure.mean() * ACTIVE_BUDGET  # well above their uniform share
    assert varied.min() >= 0.1 * ACTIVE_BUDGET / ITEMS  # the uniform share: every item can be drawn
