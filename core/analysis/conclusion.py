"""The conclusion every report opens with: what a run (or a gate) shows, in a few plain sentences.

The comparisons come in as :class:`Compared` items, from the fixed-n verdicts (:func:`from_verdicts`), from a
sequential run's anytime-valid decisions (:func:`from_sequential`) or from the gate's outcomes (:func:`from_gate`);
where the samples carry GRAMMAR groups, the blame of each system's wrong answers comes with them
(:func:`blame_of`). :func:`conclude` sorts them into what is shown better, shown worse (each with its difference
and interval), shown within the margin, equal on every sample, not detectably different, and what cannot be decided
yet, with about how many samples would settle it; and names the module to fix first. Its sentences group: one per
kind of finding, never one per metric.

**Samples that would settle an undecided comparison**: the samples a paired t test needs to detect the difference
seen, with power 0.8, at the family's Bonferroni level alpha / m (Holm's first step, so a conservative figure:
:func:`ragassay.analysis.power.samples_needed`, docs/statistics.md "Power"), from the standard deviation of the
per-sample differences (the mean difference over Cohen's d_z). It assumes the difference seen is the true one: a
planning figure, not a promise. A comparison whose differences cancel out (mean 0) has none.

**Which module to fix first** (GRAMMAR, docs/grammar.md): for each system, the module more of its wrong answers
are blamed on, the language model or retrieval (by reference documents where the samples name them, else by
context comparison); none when the blame is even or undetermined.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from .conclusion_words import AT_MAXIMUM, CANNOT_TELL, FEW, POWER, STILL_OPEN, UNPAIRED, sentences

BETTER, WORSE, WITHIN_MARGIN = "better", "worse", "within the margin"
SAME, NO_DIFFERENCE, OPEN = "equal on every sample", "no detectable difference", "cannot be decided yet"


@dataclasses.dataclass(frozen=True)
class Compared:
    """One comparison of a system with what it is compared against, and what it shows (``outcome``: one of
    :data:`BETTER`, :data:`WORSE`, :data:`WITHIN_MARGIN`, :data:`SAME`, :data:`NO_DIFFERENCE`, :data:`OPEN`).

    ``mean_diff`` and the interval [``ci_low``, ``ci_high``] at ``level`` are system - baseline in the metric's
    units (a sequential run's gain, sign-flipped for a lower-is-better metric); ``interval`` names the interval
    ("CI" or "confidence sequence"); ``needed`` the samples that would settle an open comparison; ``why`` why it
    is open (:data:`FEW`, :data:`UNPAIRED`, :data:`CANNOT_TELL`, :data:`AT_MAXIMUM`, :data:`STILL_OPEN`)."""

    system: str
    metric: str
    outcome: str
    n: int = 0
    n_discordant: int = 0
    mean_diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    interval: str = "CI"
    p: float | None = None  # orders the shown ones: the strongest first
    mde: float | None = None
    needed: int | None = None
    why: str = ""


@dataclasses.dataclass(frozen=True)
class Blamed:
    """One system's wrong answers by the module GRAMMAR blames (``method``: how the blame was assigned)."""

    system: str
    lm: int
    retrieval: int
    undetermined: int
    method: str


@dataclasses.dataclass(frozen=True)
class FixFirst:
    """A module to fix first and the systems whose wrong answers are mostly blamed on it: (system, blamed on it,
    wrong answers blamed on either module)."""

    module: str  # "retrieval" | "the language model"
    systems: list[tuple[str, int, int]]
    method: str


@dataclasses.dataclass(frozen=True)
class Conclusion:
    """What a run or a gate shows, sorted (module docstring), and :attr:`sentences`: the same in plain words."""

    against: str  # what the systems are compared with, in words: "keyword (baseline)", "the baseline run"
    samples: int
    better: list[Compared]
    worse: list[Compared]
    within_margin: list[Compared]
    same: list[Compared]
    no_difference: list[Compared]
    undecided: list[Compared]
    fix_first: list[FixFirst]
    note: str = ""  # what the comparisons stand on, when that needs saying (a partial run)
    nothing: str = ""  # why there is no comparison, when there is none
    sentences: list[str] = dataclasses.field(default_factory=list)

    @property
    def needed(self) -> tuple[int, int] | None:
        """The fewest and the most samples that would settle an undecided comparison (None: no figure)."""
        figures = sorted(c.needed for c in self.undecided if c.needed is not None)
        return (figures[0], figures[-1]) if figures else None


def conclude(
    items: Sequence[Compared],
    against: str,
    samples: int,
    *,
    blame: Sequence[Blamed] = (),
    note: str = "",
    nothing: str = "",
) -> Conclusion:
    """The conclusion of ``items`` (compared with ``against`` on ``samples`` samples), with the module to fix first
    from ``blame``; ``note`` opens the sentences (what a partial run stands on); ``nothing`` says why there is no
    comparison, when there is none."""
    found = {kind: [c for c in items if c.outcome == kind] for kind in (WITHIN_MARGIN, SAME, NO_DIFFERENCE, OPEN)}
    shown = [c for c in items if c.outcome in (BETTER, WORSE)]
    strongest = sorted(shown, key=lambda c: (c.p if c.p is not None else 1, -abs_diff(c)))
    conclusion = Conclusion(
        against,
        samples,
        [c for c in strongest if c.outcome == BETTER],
        [c for c in strongest if c.outcome == WORSE],
        found[WITHIN_MARGIN],
        found[SAME],
        found[NO_DIFFERENCE],
        found[OPEN],
        fix_first(blame),
        note,
        nothing,
    )
    return dataclasses.replace(conclusion, sentences=sentences(conclusion))


def abs_diff(item: Compared) -> float:
    return abs(item.mean_diff) if item.mean_diff is not None else 0.0


def fix_first(blame: Sequence[Blamed]) -> list[FixFirst]:
    """The module more wrong answers are blamed on, with its systems (module docstring); retrieval first."""
    modules: dict[str, list[tuple[str, int, int]]] = {"retrieval": [], "the language model": []}
    for b in blame:
        if b.retrieval != b.lm:
            module = "retrieval" if b.retrieval > b.lm else "the language model"
            modules[module].append((b.system, max(b.retrieval, b.lm), b.retrieval + b.lm))
    methods = " and ".join(dict.fromkeys(b.method for b in blame))
    return [FixFirst(module, systems, methods) for module, systems in modules.items() if systems]


def from_verdicts(verdicts) -> list[Compared]:
    """The comparisons of the decision family of :class:`ragassay.analysis.verdicts.Verdicts`; an undecided one
    with the samples that would settle it (module docstring)."""
    from .verdicts import BETTER as SHOWN_BETTER
    from .verdicts import NO_DIFFERENCE as NOT_DETECTED
    from .verdicts import NOT_COMPARABLE, TOO_FEW

    family = [p for p in verdicts.pairs if p.metric in verdicts.family]
    level = verdicts.alpha / max(len(family), 1)  # Bonferroni: Holm's first step
    items = []
    for p in family:
        common = dict(system=p.system, metric=p.metric, n=p.n, n_discordant=p.n_discordant, mean_diff=p.mean_diff)
        common |= dict(mde=p.mde)
        if p.decided:
            outcome = BETTER if p.verdict == SHOWN_BETTER else WORSE
            items.append(
                Compared(**common, outcome=outcome, ci_low=p.ci_low, ci_high=p.ci_high, level=p.level, p=p.p_holm)
            )
        elif p.verdict in (NOT_DETECTED, TOO_FEW) and not p.n_discordant:
            items.append(Compared(**common, outcome=SAME))
        elif p.verdict == NOT_DETECTED:
            items.append(Compared(**common, outcome=NO_DIFFERENCE))
        elif p.verdict == TOO_FEW:
            items.append(Compared(**common, outcome=OPEN, needed=_needed(p, level), why=FEW))
        elif p.verdict == NOT_COMPARABLE:
            items.append(Compared(**common, outcome=OPEN, why=UNPAIRED))
    return items


def _needed(pair, level: float) -> int | None:
    """Samples a paired t test needs to detect ``pair``'s mean difference (power 0.8, ``level``)."""
    from .power import samples_needed

    if not pair.mean_diff or not pair.effect_size:
        return None
    if pair.n_clusters < pair.n:  # turns of conversations: conversations needed, as the turns they hold
        if pair.unit_sd is None:
            return None
        conversations = samples_needed(pair.unit_sd, abs(pair.mean_diff), level, POWER)[0]
        return math.ceil(conversations * pair.n / pair.n_clusters)
    sd = abs(pair.mean_diff / pair.effect_size)
    return samples_needed(sd, abs(pair.mean_diff), level, POWER)[0]


def from_sequential(outcome) -> list[Compared]:
    """The decisions of a sequential run (:class:`ragassay.analysis.sequential_outcome.SequentialOutcome`)."""
    outcomes = {"better": BETTER, "worse": WORSE, "non-inferior": WITHIN_MARGIN}
    items = []
    for row in outcome.rows:
        why = AT_MAXIMUM if row.decision == "not settled" else STILL_OPEN
        items.append(
            Compared(
                row.system,
                row.metric,
                outcomes.get(row.decision, OPEN),
                n=row.n,
                mean_diff=row.mean_gain,
                ci_low=row.ci_low,
                ci_high=row.ci_high,
                level=row.level,
                interval="confidence sequence",
                why="" if row.decision in outcomes else why,
            )
        )
    return items


def from_gate(result) -> list[Compared]:
    """The outcomes of :class:`ragassay.analysis.gate.GateResult`: a regression is shown worse, an inconclusive
    pair cannot be decided yet (with the gate's samples that would settle it), a pass is shown better, equal on
    every sample, within the margin (non-inferiority) or not detectably different (superiority)."""
    from .gate import INCONCLUSIVE, NON_INFERIORITY, REGRESSION

    items = []
    for row in result.rows:
        common = dict(
            system=row.system,
            metric=row.metric,
            n=row.n,
            n_discordant=row.n_discordant,
            mean_diff=row.mean_diff,
            ci_low=row.ci_low,
            ci_high=row.ci_high,
            level=row.level,
            p=row.p_holm,
        )
        if row.outcome == REGRESSION:
            outcome = WORSE
        elif row.outcome == INCONCLUSIVE:
            outcome = OPEN
        elif not row.n_discordant:
            outcome = SAME
        elif _shown_better(row):
            outcome = BETTER
        else:
            outcome = WITHIN_MARGIN if result.settings.mode == NON_INFERIORITY else NO_DIFFERENCE
        items.append(Compared(**common, outcome=outcome, needed=row.needed, why=CANNOT_TELL if outcome == OPEN else ""))
    return items


def _shown_better(row) -> bool:
    """Whether the gate row's interval lies on the better side of 0."""
    if row.level is None:
        return False
    if row.direction == "lower":
        return row.ci_high is not None and row.ci_high < 0
    return row.ci_low is not None and row.ci_low > 0


def blame_of(grammar) -> list[Blamed]:
    """Each system's blame from a GRAMMAR report (:class:`ragassay.analysis.report.GrammarReport`): by reference
    documents where the samples name them, else by context comparison."""
    found = []
    for system in grammar.systems:
        truth = system.blame_ground_truth
        blame, method = (truth, "by reference documents") if truth is not None else (system.blame, "by context")
        found.append(Blamed(system.system, blame.lm, blame.retrieval, blame.undetermined, method))
    return found


def run_conclusion(part, grammar=None) -> Conclusion:
    """The conclusion of one run of a comparison (:class:`ragassay.analysis.comparison.RunComparison`): its
    sequential decisions when it stopped early, else its verdicts; with the GRAMMAR blame of ``grammar`` (a
    :class:`ragassay.analysis.report.GrammarReport`) when given."""
    verdicts = part.verdicts
    if part.sequential is not None and part.sequential.stopped:
        items, samples = from_sequential(part.sequential), part.sequential.checked
    else:
        items, samples = from_verdicts(verdicts), max((p.n for p in verdicts.pairs), default=0)
    blame = blame_of(grammar) if grammar is not None else []
    systems = list(dict.fromkeys(c.system for c in verdicts.cells))
    if len(systems) < 2:
        nothing = f"One system, {verdicts.baseline}: nothing to compare it with (its means are in the comparison)."
    else:
        nothing = f"No metric varies across the systems: nothing to decide against {verdicts.baseline} (baseline)."
    against = f"{verdicts.baseline} (baseline)"
    return conclude(items, against, samples, blame=blame, note=verdicts.partial or "", nothing=nothing)
