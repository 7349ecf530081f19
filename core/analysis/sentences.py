"""The verdicts of a run in plain words: one line per finding, shared by ``compare``, the HTML report, the
notebook display and the pytest assertions, so every surface says the same thing.

Wins and losses come first (smallest Holm p first), then the comparisons without a detectable difference (one
line per metric), the systems equal to the baseline on every sample (one line per system), the comparisons with
too few differing samples to decide (one line), those that cannot be compared, and a closing line naming the
metrics left out of the decision (constant on every system, or not declared). No two lines say the same thing
about different metrics: a reader of many metrics gets one line per kind of finding, not one per metric.
"""

from __future__ import annotations

import math

from ..text import counted, listed
from .clustered import turns_in
from .verdicts import BETTER, NO_DIFFERENCE, NOT_COMPARABLE, TOO_FEW, UNDECIDED, PairVerdict, Verdicts


def verdict_sentences(verdicts: Verdicts) -> list[str]:
    """The verdicts in plain words (module docstring)."""
    pairs = verdicts.pairs
    decided = sorted((p for p in pairs if p.decided), key=lambda p: (p.p_holm, -abs(p.effect_size or math.inf)))
    undecided = sorted((p for p in pairs if p.verdict == NO_DIFFERENCE and p.n_discordant), key=lambda p: p.p_holm)
    lines = [sentence(p) for p in decided] + _grouped(undecided)
    lines += _equal([p for p in pairs if p.verdict in (NO_DIFFERENCE, TOO_FEW) and not p.n_discordant])
    lines += _too_few([p for p in pairs if p.verdict == TOO_FEW and p.n_discordant])
    lines += [sentence(p) for p in pairs if p.verdict == NOT_COMPARABLE]
    return lines + _left_out(verdicts)


def sentence(pair: PairVerdict) -> str:
    """One pair's verdict in words."""
    base = f"{pair.baseline} (baseline)"
    if pair.verdict == NOT_COMPARABLE:
        return f"{pair.system} and {base} cannot be compared on {pair.metric}: {pair.reason}."
    if pair.verdict == TOO_FEW and pair.n_discordant == 0:
        return f"No difference between {pair.system} and {base} on {pair.metric}: equal on all {pair.n} samples."
    if pair.verdict == TOO_FEW:
        return (
            f"Too few differing samples to decide between {pair.system} and {base} on {pair.metric} "
            f"(they differ on {pair.n_discordant} of {pair.n}; mean difference {pair.mean_diff:+.3f}, "
            f"{interval(pair)}): no result on so few could reach the level. Score more samples."
        )
    if pair.verdict == NO_DIFFERENCE:
        if pair.n_discordant == 0:
            return f"No difference between {pair.system} and {base} on {pair.metric}: equal on all {pair.n} samples."
        return (
            f"No detectable difference between {pair.system} and {base} on {pair.metric} (mean difference "
            f"{pair.mean_diff:+.3f}, {interval(pair)}, Holm p {p_text(pair.p_holm)}; "
            f"n = {turns_in(pair.n, pair.n_clusters)}; {_limit(pair)})."
        )
    if pair.verdict == UNDECIDED:
        return f"{pair.system} - {base} on {pair.metric}: {pair.mean_diff:+.3f} ({interval(pair)}; not decided)."
    verb = "beats" if pair.verdict == BETTER else "is worse than"
    return (
        f"{pair.system} {verb} {base} on {pair.metric} by {pair.mean_diff:+.3f} "
        f"({interval(pair)}, Holm p {p_text(pair.p_holm)}; n = {turns_in(pair.n, pair.n_clusters)})."
    )


def interval(pair: PairVerdict) -> str:
    """'97.5% CI -0.012 to +0.050': the pair's interval at its level (an open side as 'any')."""
    if pair.level is None:
        return "no interval"
    low = "any lower value" if pair.ci_low is None else f"{pair.ci_low:+.3f}"
    high = "any higher value" if pair.ci_high is None else f"{pair.ci_high:+.3f}"
    return f"{confidence(pair.level)} CI {low} to {high}"


def confidence(level: float) -> str:
    """1 - level as a percentage with the digits it needs: 95%, 97.5%, 98.33%."""
    text = f"{100 * (1 - level):.2f}".rstrip("0").rstrip(".")
    return f"{text}%"


def p_text(p: float | None) -> str:
    """'= 0.012', '< 0.001' or '-'."""
    if p is None:
        return "-"
    return "< 0.001" if p < 0.001 else f"= {p:.3f}"


def _limit(pair: PairVerdict) -> str:
    if pair.mde is None:
        return "every sample differs by the same amount, so the MDE cannot be estimated"
    return f"differences below {pair.mde:.2g} cannot be detected with this many samples"


def _grouped(undecided: list[PairVerdict]) -> list[str]:
    """One line per metric for the pairs without a detectable difference (the single-pair sentence when a
    metric has one such pair)."""
    by_metric: dict[str, list[PairVerdict]] = {}
    for pair in undecided:
        by_metric.setdefault(pair.metric, []).append(pair)
    lines = []
    for metric, pairs in by_metric.items():
        if len(pairs) == 1:
            lines.append(sentence(pairs[0]))
            continue
        base, ns = f"{pairs[0].baseline} (baseline)", sorted({p.n for p in pairs})
        n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]}-{ns[-1]}"
        systems = ", ".join(f"{p.system} ({p.mean_diff:+.3f}, {interval(p)})" for p in pairs)
        mdes = sorted(p.mde for p in pairs if p.mde is not None)
        span = f"{mdes[0]:.2g}" if mdes and f"{mdes[0]:.2g}" == f"{mdes[-1]:.2g}" else None
        if mdes and span is None:
            span = f"{mdes[0]:.2g}-{mdes[-1]:.2g}"
        limit = f"; differences below {span} cannot be detected with this many samples" if mdes else ""
        lines.append(f"No detectable difference on {metric} for {systems} against {base} ({n_text}{limit}).")
    return lines


def _by_system(pairs: list[PairVerdict]) -> dict[str, list[PairVerdict]]:
    found: dict[str, list[PairVerdict]] = {}
    for pair in pairs:
        found.setdefault(pair.system, []).append(pair)
    return found


def _equal(pairs: list[PairVerdict]) -> list[str]:
    """One line per system for the metrics on which it equals the baseline on every sample."""
    lines = []
    for system, found in _by_system(pairs).items():
        ns = {p.n for p in found}
        where = f"all {found[0].n} samples" if len(ns) == 1 else "every sample both scored"
        metrics = listed([p.metric for p in found])
        lines.append(
            f"No difference between {system} and {found[0].baseline} (baseline) on {metrics}: equal on {where}."
        )
    return lines


def _too_few(pairs: list[PairVerdict]) -> list[str]:
    """One line for every pair with too few differing samples (the single-pair sentence for one)."""
    if len(pairs) <= 1:
        return [sentence(p) for p in pairs]
    groups = [
        f"{system} on "
        + listed([f"{p.metric} (differs on {p.n_discordant} of {p.n}, {p.mean_diff:+.3f})" for p in found])
        for system, found in _by_system(pairs).items()
    ]
    return [
        f"Too few differing samples to decide {counted(len(pairs), 'comparison')} against {pairs[0].baseline} "
        f"(baseline): {'; '.join(groups)}. No result on so few could reach the level: score more samples."
    ]


def _left_out(verdicts: Verdicts) -> list[str]:
    lines = []
    constant = [m for m in verdicts.constant if m not in verdicts.family]
    if constant:
        lines.append(f"Left out of the decision, equal on every system and sample: {', '.join(constant)}.")
    undeclared = [
        m
        for m in dict.fromkeys(p.metric for p in verdicts.pairs)
        if m not in verdicts.family and m not in verdicts.constant
    ]
    if undeclared:
        lines.append(f"Not decided (not in [evaluation] decide): {', '.join(undeclared)}.")
    return lines
