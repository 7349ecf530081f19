"""A :class:`ragassay.analysis.conclusion.Conclusion` in plain sentences, the same on every surface (the terminal
``report``, ``compare`` and ``run``, the HTML report, ``ragassay serve`` and the gate's summary). The conclusion
is read duck-typed: :mod:`ragassay.analysis.conclusion` imports this module, not the other way round.

One sentence per kind of finding, in this order: what a partial run stands on; what is shown better, then worse
(the strongest first, each with its difference and interval; a few named, the rest counted), or that nothing is;
what is shown within the margin; equal on every sample; no detectable difference (with the smallest difference
the samples could see); what cannot be decided yet and about how many samples would settle it; the module to fix
first. Lists of systems and metrics group by system: ``bm25 and top1 on a, b and c`` or ``bm25 on a; top1 on b``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..text import counted, listed
from .sentences import confidence

#: why a comparison cannot be decided yet (:attr:`ragassay.analysis.conclusion.Compared.why`)
FEW, UNPAIRED, CANNOT_TELL = "too few samples differ", "fewer than 2 samples scored by both", "the samples cannot tell"
AT_MAXIMUM, STILL_OPEN = "not settled at the maximum sample count", "still open: the run has not finished"
POWER = 0.8  # of the samples that would settle an undecided comparison
SHOWN = 4  # comparisons named with their numbers in one sentence; the rest are counted
MAX_METRICS = 6  # metrics named per system in a list; the rest are counted


def sentences(c: Any) -> list[str]:
    """The conclusion in plain words (module docstring)."""
    lines = [c.note[:1].upper() + c.note[1:] + "."] if c.note else []
    if not (c.better or c.worse or c.within_margin or c.same or c.no_difference or c.undecided):
        return (
            lines
            + [c.nothing or f"Nothing to compare with {c.against}."]
            + ([fix_first(c.fix_first)] if c.fix_first else [])
        )
    if c.better:
        lines.append(f"Shown better than {c.against}: {amounts(c.better)}.")
    if c.worse:
        lines.append(f"Shown worse than {c.against}: {amounts(c.worse)}.")
    if not (c.better or c.worse):
        lines.append(f"Nothing is shown better or worse than {c.against} on these {counted(c.samples, 'sample')}.")
    if c.within_margin:
        lines.append(f"Shown not worse than {c.against} by more than the margin: {where(c.within_margin)}.")
    if c.same:
        lines.append(f"Equal to {c.against} on every sample: {where(c.same)}.")
    if c.no_difference:
        lines.append(f"No detectable difference from {c.against}: {where(c.no_difference)}{unseen(c.no_difference)}.")
    if c.undecided:
        lines.append(undecided(c))
    if c.fix_first:
        lines.append(fix_first(c.fix_first))
    return lines


def amounts(items: Sequence[Any]) -> str:
    """``top1 on recall_at_k by -0.250 (95% CI -0.412 to -0.083) and on context_mrr by -0.125 (...); bm25 on ...``:
    the first :data:`SHOWN` (the strongest first, grouped by system), the rest counted."""
    by_system: dict[str, list[str]] = {}
    for c in items[:SHOWN]:
        by_system.setdefault(c.system, []).append(f"on {c.metric} by {c.mean_diff:+.3f} ({interval_text(c)})")
    named = [f"{system} {listed(found)}" for system, found in by_system.items()]
    rest = len(items) - SHOWN
    return "; ".join(named) + (f"; and {counted(rest, 'more comparison')} (the verdicts list them)" if rest > 0 else "")


def interval_text(item: Any) -> str:
    """``98.33% CI +0.033 to +0.222`` (an open side as 'any')."""
    if item.level is None:
        return "no interval"
    low = "any lower value" if item.ci_low is None else f"{item.ci_low:+.3f}"
    high = "any higher value" if item.ci_high is None else f"{item.ci_high:+.3f}"
    return f"{confidence(item.level)} {item.interval} {low} to {high}"


def where(items: Sequence[Any]) -> str:
    """The systems and metrics of ``items``: ``bm25 and top1 on a, b and c`` when every system has the same
    metrics, else ``bm25 on a and b; top1 on c``."""
    by_system: dict[str, list[str]] = {}
    for c in items:
        by_system.setdefault(c.system, []).append(c.metric)
    lists = {system: _metrics(metrics) for system, metrics in by_system.items()}
    if len(lists) > 1 and len(set(lists.values())) == 1:
        return f"{listed(list(lists))} on {next(iter(lists.values()))}"
    return "; ".join(f"{system} on {metrics}" for system, metrics in lists.items())


def _metrics(metrics: list[str]) -> str:
    if len(metrics) <= MAX_METRICS:
        return listed(metrics)
    return listed([*metrics[: MAX_METRICS - 1], counted(len(metrics) - MAX_METRICS + 1, "more metric")])


def unseen(items: Sequence[Any]) -> str:
    """``` (differences below 0.034 to 0.036 would likely go unseen)```, from the comparisons' MDEs."""
    mdes = sorted(c.mde for c in items if c.mde is not None)
    if not mdes:
        return ""
    low, high = f"{mdes[0]:.2g}", f"{mdes[-1]:.2g}"
    span = low if low == high else f"{low} to {high}"
    return f" (differences below {span} would likely go unseen on these samples)"


def undecided(c: Any) -> str:
    """What cannot be decided yet, why, and about how many samples would settle it."""
    items = c.undecided
    text = f"Cannot be decided yet ({_why(items)}): {where(items)}"
    needed = c.needed
    if needed is not None:
        fewest = min((i for i in items if i.needed is not None), key=lambda i: i.needed)
        span = (
            f"{needed[0]:,}"
            if needed[0] == needed[1]
            else f"{needed[0]:,} ({fewest.system} on {fewest.metric}) to {needed[1]:,}"
        )
        return (
            f"{text}. About {span} samples would settle {'it' if len(items) == 1 else 'them'} (power {POWER:g}, "
            "if the differences seen are the true ones)."
        )
    if all(i.why == AT_MAXIMUM for i in items):
        return f"{text}. A larger max_samples, or a full run, may settle {'it' if len(items) == 1 else 'them'}."
    return f"{text}. Score more samples to settle {'it' if len(items) == 1 else 'them'}."


def _why(items: Sequence[Any]) -> str:
    """Why the comparisons are open, once: ``too few samples differ: 1 to 3 of 32``."""
    whys = list(dict.fromkeys(i.why for i in items if i.why))
    parts = []
    for why in whys:
        if why == FEW:
            counts = sorted(i.n_discordant for i in items if i.why == FEW)
            ns = sorted(i.n for i in items if i.why == FEW)
            few = f"{counts[0]}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]}"
            total = f"{ns[-1]}" if ns[0] == ns[-1] else f"{ns[0]} to {ns[-1]}"
            parts.append(f"{why}: {few} of {total}")
        else:
            parts.append(why)
    return "; ".join(parts) or counted(len(items), "comparison")


def fix_first(modules: Sequence[Any]) -> str:
    """``Fix first: the language model, blamed for most wrong answers of keyword (16 of 16) and top1 (11 of 19);
    retrieval, for bm25 (9 of 12) (GRAMMAR blame by reference documents).``"""
    parts = [
        f"{m.module}, {'blamed for most wrong answers of' if not i else 'for'} "
        + listed([f"{system} ({blamed} of {both})" for system, blamed, both in m.systems])
        for i, m in enumerate(modules)
    ]
    return f"Fix first: {'; '.join(parts)} (GRAMMAR blame {modules[0].method})."
