"""The verdict block of ``compare`` and ``run``: which system beats the baseline on which metric, in words
(:mod:`ragassay.analysis.verdicts`), its options, its legend, and its json/csv/markdown table."""

from __future__ import annotations

import click

from .render import Column, Table, esc

DOCS = "docs/statistics.md"
MAX_LINES = 12  # findings printed per run; the strongest come first
EXPLAIN = (
    f"95% CI: the range that holds the true mean in 95 of 100 repetitions; a BCa bootstrap interval, resampling "
    f"the samples ({DOCS}#confidence-intervals).",
    f"Holm p: the p-value of a paired sign-flip permutation test, adjusted (Holm 1979) for testing every system "
    f"x metric at once, so the chance of any false 'beats' stays below alpha ({DOCS}#paired-tests-and-holm).",
    f"MDE: the smallest difference these samples detect 80% of the time at alpha; a smaller true difference "
    f"usually shows as 'no detectable difference' ({DOCS}#the-formulas).",
    f"beats / is worse than: Holm p < alpha, in the metric's direction (higher or lower is better); no detectable "
    f"difference: not shown to differ, which is not proof they are equal ({DOCS}#verdicts).",
)


def verdict_options(command):
    """``--baseline``, ``--alpha``, ``--seed``, ``--explain``, ``--compact`` (passed as keyword arguments)."""
    options = [
        click.option(
            "--baseline",
            default=None,
            metavar="SYSTEM",
            help="System the others are tested against (default: the run's first system).",
        ),
        click.option(
            "--alpha", type=float, default=0.05, show_default=True, help="Level of the Holm-adjusted paired tests."
        ),
        click.option(
            "--seed",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Seed of the bootstrap and permutation draws (same seed, same numbers).",
        ),
        click.option("--explain", is_flag=True, help="Explain CI, Holm p, MDE and the verdict words."),
        click.option("--compact", is_flag=True, help="Plain text for CI logs: no box drawing, no colour."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def verdicts_of(store, run_ids: list[str], *, baseline: str | None = None, alpha: float = 0.05, seed: int = 0):
    """:func:`ragassay.analysis.verdicts.decide` of each run, in order."""
    from ..analysis.verdicts import decide

    return [decide(store, run_id, baseline=baseline, alpha=alpha, seed=seed) for run_id in run_ids]


def print_verdicts(out, verdicts: list, *, explain: bool = False) -> None:
    """The plain-words block of each run's verdicts (and the legend with ``explain``) to the console ``out``."""
    from ..analysis.verdicts import verdict_sentences

    for v in verdicts:
        compared = sum(1 for p in v.pairs if p.p_value is not None)
        out.print(
            esc(
                f"verdicts, run {v.run_id[:8]}: against {v.baseline} (baseline), alpha {v.alpha:g}, "
                f"Holm over {compared} comparisons, seed {v.seed}"
            ),
            highlight=False,
        )
        sentences = verdict_sentences(v) or ["only one system: nothing to compare"]
        for sentence in sentences[:MAX_LINES]:
            out.print(esc(f"  {sentence}"), highlight=False)
        if len(sentences) > MAX_LINES:
            out.print(f"  ... and {len(sentences) - MAX_LINES} more (--format json lists every pair)", highlight=False)
    if explain:
        out.print("legend:", highlight=False)
        for line in EXPLAIN:
            out.print(esc(f"  {line}"), highlight=False)


PARTS = ("n", "mean_diff", "ci_low", "ci_high", "p_value", "p_holm", "effect_size", "mde")


def verdicts_table(verdicts: list) -> Table:
    """Every pair verdict of ``verdicts`` as rows (for json, csv and markdown)."""
    columns = [Column("run", in_text=False), Column("baseline"), Column("system"), Column("metric")]
    columns += [Column(part, numeric=True) for part in PARTS]
    columns += [Column("verdict"), Column("reason")]
    rows = [
        {
            "run": v.run_id,
            "baseline": p.baseline,
            "system": p.system,
            "metric": p.metric,
            "verdict": p.verdict,
            "reason": p.reason,
        }
        | {part: getattr(p, part) for part in PARTS}
        for v in verdicts
        for p in v.pairs
    ]
    notes = [v.method for v in verdicts[:1]]
    return Table("verdicts: each system against the baseline (paired, Holm-adjusted)", columns, rows, notes)
