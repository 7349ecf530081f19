"""Assertions with statistical sense for tests of a RAG system (re-exported by :mod:`ragassay.testing.pytest_plugin`).

* :func:`assert_no_regression` fails only when the paired sign-flip permutation test of
  :mod:`ragassay.analysis.verdicts` says a system is *worse* than its baseline: a small, noisy difference passes.
* :func:`assert_metric` fails when the lower bound of the BCa bootstrap interval of a mean is below a floor
  (Efron & Tibshirani 1993, An Introduction to the Bootstrap, section 14.3), not when the mean is.

A failure message is plain text: the verdict block as ``ragassay compare`` prints it, the numbers (mean,
interval, p, n) and the 5 worst samples (question id, question, answer, value). See docs/pytest.md.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from ..errors import ConfigError

WORST = 5


def assert_no_regression(
    run: Any, baseline: Any, metric: str, alpha: float = 0.05, *, system: str | None = None, seed: int = 0
) -> None:
    """Fail when a system is significantly worse than ``baseline`` on ``metric``, paired by question_id.

    :param run: a :class:`ragassay.Run`.
    :param baseline: a system name of ``run``, or another :class:`ragassay.Run` (then the runs' systems named
        ``system``, or their only systems, are paired by question_id).
    :param system: the system under test; default: every other system of ``run`` (then the p-values are
        Holm-adjusted over them; one system is one test, and Holm leaves its p-value unchanged).
    :param alpha: the level of the two-sided paired test; a regression fails when its (Holm) p < alpha.
    """
    from ..analysis.verdicts import WORSE, decide_values

    values, systems, direction, unscored = _paired_values(run, baseline, metric, system)
    verdicts = decide_values(
        values,
        systems,
        [metric],
        {metric: direction},
        run_id=run.run_id,
        baseline=systems[0],
        alpha=alpha,
        seed=seed,
        unscored=unscored,
    )
    worse = [p for p in verdicts.pairs if p.verdict == WORSE]
    if not worse:
        return
    cells = {c.system: c for c in verdicts.cells}
    lines = [f"regression on {metric}: " + ", ".join(f"{p.system} is worse than {p.baseline}" for p in worse), ""]
    lines += [verdict_block(verdicts), "numbers:"]
    lines += [f"  {_cell_line(cells[s])}" for s in systems]
    lines += [
        f"  {p.system} - {p.baseline}: mean difference {p.mean_diff:+.4f}, 95% CI {_interval(p)}, "
        f"p {p.p_value:.4g}, Holm p {p.p_holm:.4g}, n {p.n} pairs"
        for p in verdicts.pairs
        if p.p_value is not None
    ]
    for pair in worse:
        lines += ["", *worst_samples(run, _own_name(pair.system, run), metric, direction)]
    raise AssertionError("\n".join(lines))


def assert_metric(
    run: Any,
    metric: str,
    at_least: float | None = None,
    *,
    at_most: float | None = None,
    confidence: float = 0.95,
    system: str | None = None,
    seed: int = 0,
) -> None:
    """Fail when the ``confidence`` bootstrap interval of the mean of ``metric`` does not lie above
    ``at_least`` (its lower bound is below it) or below ``at_most`` (its upper bound is above it).

    :param system: the system to check; default: every system of the run.
    :param seed: the seed of the bootstrap resamples (same seed, same bounds).
    """
    from ..analysis.bootstrap import bootstrap_mean_ci
    from ..analysis.verdicts import RESAMPLES

    if (at_least is None) == (at_most is None):
        raise ConfigError(f"assert_metric({metric!r}): give exactly one of at_least= or at_most=")
    failures = []
    for name in [system] if system else _systems_of(run):
        values, unscored, direction = _metric_values(run, name, metric)
        interval = bootstrap_mean_ci(
            np.asarray(values, dtype=float), n_resamples=RESAMPLES, confidence_level=confidence, seed=seed
        )
        low, high, why = _bounds(interval, values)
        bound, limit, word = (low, at_least, "lower") if at_least is not None else (high, at_most, "upper")
        if bound is None or (bound < limit if at_least is not None else bound > limit):
            failed = f"{confidence:.0%} {word} bound {bound:.4f}" if bound is not None else f"no bound ({why})"
            goal = f"at least {at_least:g}" if at_least is not None else f"at most {at_most:g}"
            failures += [
                f"{metric} of {name}: {failed}, wanted {goal}",
                f"  mean {_num(interval.mean)}, {confidence:.0%} CI [{_num(low)}, {_num(high)}], "
                f"n {interval.n_scored} scored, {unscored} unscored "
                f"(BCa bootstrap, {RESAMPLES:,} resamples, seed {seed})",
                *worst_samples(run, name, metric, direction),
                "",
            ]
    if failures:
        block = verdict_block(run.verdicts(metrics=[metric], seed=seed)) if len(_systems_of(run)) > 1 else ""
        raise AssertionError("\n".join(failures) + ("\n" + block if block else ""))


def verdict_block(verdicts: Any) -> str:
    """The verdict block in words, exactly as ``ragassay compare --compact`` prints it."""
    from rich.console import Console

    from ..cli.verdict_view import print_verdicts

    buffer = io.StringIO()
    print_verdicts(Console(file=buffer, no_color=True, soft_wrap=True, width=200), [verdicts])
    return buffer.getvalue()


def worst_samples(run: Any, system: str, metric: str, direction: str, n: int = WORST) -> list[str]:
    """The ``n`` worst scored samples of ``system`` on ``metric`` (then unscored ones), as plain-text lines."""
    frames = run.frames()
    scores = frames.scores().loc[system][metric]
    scored = scores.dropna().sort_values(ascending=direction != "lower", kind="stable")
    lines = [f"{min(n, len(scored))} worst samples of {system} on {metric} (question id, value, question, answer):"]
    for qid, value in scored.head(n).items():
        question = _short(frames.samples.loc[qid, "question"])
        answer = _short(frames.outputs.loc[(system, qid), "answer"])
        lines.append(f"  {qid}  {value:.4g}  question: {question}  answer: {answer}")
    missing = int(scores.isna().sum())
    if missing:
        lines.append(f"  and {missing} samples without a value (unscored, failed or missing; see run.frames())")
    return lines


def _paired_values(run: Any, baseline: Any, metric: str, system: str | None):
    """values (system, metric) -> {question_id: value}, systems (baseline first), direction, unscored counts."""
    if isinstance(baseline, str):
        others = [system] if system else [s for s in _systems_of(run) if s != baseline]
        if baseline not in _systems_of(run):
            raise ConfigError(
                f"baseline '{baseline}' is not a system of run {run.run_id[:12]}. "
                f"Its systems: {', '.join(_systems_of(run))}"
            )
        sources = [(baseline, run, baseline)] + [(name, run, name) for name in others]
    else:
        own, theirs = _single_system(run, system), _single_system(baseline, system)
        sources = [(f"{theirs}@{baseline.run_id[:8]}", baseline, theirs), (f"{own}@{run.run_id[:8]}", run, own)]
    values, unscored, directions = {}, {}, []
    for label, source, name in sources:
        scored, count, direction = _metric_values(source, name, metric, keyed=True)
        values[(label, metric)], unscored[(label, metric)] = scored, count
        directions.append(direction)
    return values, [label for label, _, _ in sources], directions[0], unscored


def _metric_values(run: Any, system: str, metric: str, keyed: bool = False):
    """The scored values of ``system`` on ``metric`` (a list, or {question_id: value}), unscored count, direction."""
    from ..analysis.comparison import per_sample_values, summarize_runs

    with run._store() as store:
        comparison = summarize_runs(store, [run.run_id])
        if metric not in comparison.columns:
            raise ConfigError(
                f"run {run.run_id[:12]} has no metric '{metric}'. Its metrics: {', '.join(comparison.columns)}"
            )
        if system not in [r.system for r in comparison.rows]:
            raise ConfigError(
                f"run {run.run_id[:12]} has no system '{system}'. Its systems: "
                + ", ".join(r.system for r in comparison.rows)
            )
        unscored = next(r.cells[metric].unscored for r in comparison.rows if r.system == system)
        scored = dict(per_sample_values(store, run.run_id).get((system, metric), {}))
    direction = comparison.direction(metric)
    return (scored if keyed else [scored[q] for q in sorted(scored)]), unscored, direction


def _systems_of(run: Any) -> list[str]:
    with run._store() as store:
        return [s["name"] for s in store.run_systems(run.run_id)]


def _single_system(run: Any, system: str | None) -> str:
    systems = _systems_of(run)
    if system is not None:
        if system not in systems:
            raise ConfigError(f"run {run.run_id[:12]} has no system '{system}'. Its systems: {', '.join(systems)}")
        return system
    if len(systems) != 1:
        raise ConfigError(
            f"run {run.run_id[:12]} has systems {', '.join(systems)}; name the one to compare with system=..."
        )
    return systems[0]


def _own_name(label: str, run: Any) -> str:
    """The system name inside ``run`` of a label ``name@run8`` (or the name itself)."""
    name, _, suffix = label.rpartition("@")
    return name if suffix == run.run_id[:8] else label


def _bounds(interval: Any, values: list[float]) -> tuple[float | None, float | None, str]:
    """The interval's bounds; when every scored value is equal the interval is that value."""
    if interval.ci_low is not None:
        return interval.ci_low, interval.ci_high, ""
    if len(values) >= 2 and min(values) == max(values):
        return values[0], values[0], ""
    return None, None, interval.reason or "no interval"


def _cell_line(cell: Any) -> str:
    interval = "no CI" if cell.ci_low is None else f"95% CI [{cell.ci_low:.4f}, {cell.ci_high:.4f}]"
    return f"{cell.system}: mean {_num(cell.mean)}, {interval}, n {cell.n} scored, {cell.unscored} unscored"


def _interval(pair: Any) -> str:
    return "none" if pair.ci_low is None else f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}]"


def _num(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"


def _short(text: Any, width: int = 100) -> str:
    text = " ".join(str(text if text is not None else "(no answer)").split())
    return text if len(text) <= width else text[: width - 3] + "..."
