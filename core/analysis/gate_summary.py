"""The gate's markdown summary, written for a pull-request comment (``ragassay gate --summary FILE``).

A headline (✅ no regression / ❌ N regressions and M inconclusive in K comparisons), the conclusion in plain
words (:mod:`ragassay.analysis.conclusion`: what is shown worse or better and by how much, what cannot be decided
yet and how many samples would settle it), what was compared with what
and in which mode with which margin, every pair that does not pass with its difference, interval and the samples
that would settle it, a table per system (metric, baseline and candidate means, difference with its interval,
margin, Holm p, outcome), the cost delta, failures and unscored values, notes, and links to the HTML report.
Every string that comes from a user (system and metric names, paths, URLs, reasons) goes through :func:`md`
or :func:`md_url`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from ..text import counted
from .clustered import turns_in
from .gate import INCONCLUSIVE, PASS, REGRESSION, GateResult, GateRow
from .sentences import confidence

DOCS = "docs/ci.md"
ICONS = {REGRESSION: "❌ ", PASS: "✅ ", INCONCLUSIVE: "⚠️ "}
_MARKDOWN_SPECIALS = re.compile(r"([\\`*\[\]|~]|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")


def md(text: object) -> str:
    """``text`` safe inside markdown and a table cell: HTML escaped, markdown punctuation backslash-escaped
    (pipes, backticks, emphasis, links; an underscore inside a word is left alone), line breaks as spaces."""
    import html

    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(" ".join(str(text).split()), quote=False))


def md_url(url: str) -> str:
    """A URL safe as a markdown link target: spaces, parentheses, angle brackets and quotes percent-encoded."""
    from urllib.parse import quote

    return quote(url.strip(), safe=":/?#&=%~+@!$,;*.-_'")


def markdown_summary(result: GateResult, *, report_url: str | None = None, html_path: str | None = None) -> str:
    """The summary of ``result`` as GitHub-flavoured markdown (a pull-request comment or a job summary)."""
    parts = [_headline(result), _conclusion(result), _context(result), _links(report_url, html_path)]
    if result.regressions:
        parts.append("### Regressions\n\n" + "\n".join(f"- {_failing(row)}" for row in result.regressions))
    if result.inconclusive:
        label = "fail the gate" if result.settings.on_inconclusive == "fail" else "pass (--on-inconclusive pass)"
        lines = "\n".join(f"- {_failing(row)}" for row in result.inconclusive)
        parts.append(f"### Inconclusive (these {label})\n\n{lines}")
    for system in dict.fromkeys(row.system for row in result.rows):
        parts.append(_system_table(system, [row for row in result.rows if row.system == system], result))
    parts.append(_ppi_table(result))
    parts += [_cost_table(_usage(result.usage_baseline), _usage(result.usage_candidate)), _health_table(result)]
    if result.notes:
        parts.append("### Notes\n\n" + "\n".join(f"- {md(note)}" for note in result.notes))
    parts.append(f"<sub>{md(METHOD)}; seed {result.settings.seed}. What the outcomes mean: {DOCS}.</sub>")
    return "\n\n".join(part for part in parts if part) + "\n"


METHOD = (
    "Each pair: a paired sign-flip permutation test and the interval that inverts it, Holm-adjusted over all pairs "
    "(each interval at its Holm level), Tarone's reduction for pairs with too few differing samples"
)


def _headline(result: GateResult) -> str:
    return f"## {ICON[result.exit_code]} {headline(result)}"


ICON = {0: "✅", 1: "❌"}


def headline(result: GateResult) -> str:
    """``ragassay gate: 1 regression and 2 inconclusive in 5 comparisons``, or ``ragassay gate: no regression (5
    comparisons)``: the summary's headline, and the one line ``gate --quiet`` prints when the gate fails."""
    m = len(result.rows)
    failing, regressions, inconclusive = len(result.failing), len(result.regressions), len(result.inconclusive)
    if failing:
        what = [counted(regressions, "regression")] if regressions else []
        if inconclusive and result.settings.on_inconclusive == "fail":
            what.append(f"{inconclusive} inconclusive")
        return f"ragassay gate: {' and '.join(what)} in {counted(m, 'comparison')}"
    if not m:
        return "ragassay gate: no regression (nothing differs: every metric has one value on every sample)"
    extra = f", {inconclusive} inconclusive (passed by --on-inconclusive pass)" if inconclusive else ""
    return f"ragassay gate: no regression ({counted(m, 'comparison')}{extra})"


def _conclusion(result: GateResult) -> str:
    """The conclusion in plain words, one paragraph."""
    from .conclusion import conclude, from_gate

    if not result.rows:
        return ""
    found = conclude(from_gate(result), "the baseline run", result.shared_samples)
    return "**In short:** " + " ".join(md(sentence) for sentence in found.sentences)


def _context(result: GateResult) -> str:
    s = result.settings
    source = f" from {md(result.baseline_source)}" if result.baseline_source else ""
    extra = []
    if result.candidate_only_samples:
        extra.append(f"{result.candidate_only_samples} only in the candidate")
    if result.baseline_only_samples:
        extra.append(f"{result.baseline_only_samples} only in the baseline")
    only = f" ({', '.join(extra)}: not compared)" if extra else ""
    if s.mode == "non-inferiority":
        mode = (
            f"Mode **non-inferiority**: a pair passes when its difference is shown to be above -margin (margin "
            f"{s.margin:g} of each metric's range unless set per metric), is a regression when shown worse, and is "
            f"inconclusive otherwise (inconclusive pairs {s.on_inconclusive} the gate)."
        )
    else:
        mode = "Mode **superiority**: a pair is a regression only when shown worse by the paired test."
    return (
        f"Candidate run `{result.candidate_run[:12]}` against baseline run `{result.baseline_run[:12]}`{source}, "
        f"paired by question_id on {_shared(result)} in both runs{only}. Each system against its "
        f"namesake, alpha {s.alpha:g} over all {len(result.rows)} comparisons. {mode}"
    )


def _shared(result: GateResult) -> str:
    """The shared samples in words: "N samples", or "N turns in M conversations" (flipped whole)."""
    if result.conversations is None:
        return f"{result.shared_samples} samples"
    return f"{turns_in(result.shared_samples, result.conversations)} (each conversation flipped whole)"


def _links(report_url: str | None, html_path: str | None) -> str:
    if report_url:
        return f"📊 [HTML report]({md_url(report_url)})"
    if html_path:
        return f"📊 HTML report: {md(html_path)} (in this job's artifacts)"
    return ""


def _failing(row: GateRow) -> str:
    text = (
        f"**{md(row.system)}** on **{md(row.metric)}**: {_num(row.baseline_mean)} → {_num(row.candidate_mean)} "
        f"({_diff(row)}{_margin(row)}, n = {turns_in(row.n, row.n_clusters)}, differing on {row.n_discordant})"
    )
    if row.reason:
        text += f": {md(row.reason)}"
    if row.needed_clusters is not None:
        text += f"; about {row.needed_clusters:,} conversations ({row.needed:,} turns) would settle it"
    elif row.needed is not None:
        text += f"; about {row.needed:,} samples would settle it"
    return text


def _system_table(system: str, rows: list[GateRow], result: GateResult) -> str:
    lines = [
        f"### {md(system)}",
        "",
        "| metric | baseline | candidate | difference [CI] | margin | Holm p | n | outcome |",
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | --- |",
    ]
    for row in rows:
        arrow = "↑" if row.direction == "higher" else "↓"
        outcome = ICONS.get(row.outcome, "") + row.outcome + (f": {md(row.reason)}" if row.reason else "")
        margin = "-" if row.margin is None else f"{row.margin:g}"
        lines.append(
            f"| {md(row.metric)} {arrow} | {_mean(row.baseline_mean, row.baseline_unscored)} | "
            f"{_mean(row.candidate_mean, row.candidate_unscored)} | {_diff(row)} | {margin} | {_p(row.p_holm)} | "
            f"{turns_in(row.n, row.n_clusters)} | {outcome} |"
        )
    return "\n".join(lines)


def _ppi_table(result: GateResult) -> str:
    """With people's labels (``--labelled``): per labelled comparison, the labels it used, PPI++'s lambda and
    what the metric alone would have said (docs/statistics.md, When the judge errs)."""
    if not result.ppi:
        return ""
    lines = [
        "### Decided on people's labels (prediction-powered)",
        "",
        "| system | metric (rubric) | labels baseline / candidate (both) | lambda | judge only [CI] |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for p in result.ppi:
        judge = "-" if p.judge_mean is None else f"{p.judge_mean:+.3f} [{p.judge_low:+.3f}, {p.judge_high:+.3f}]"
        lam = "-" if p.lam is None else f"{p.lam:.2f}"
        lines.append(
            f"| {md(p.system)} | {md(p.metric)} ({md(p.rubric)}) | {p.labels_baseline} / {p.labels_system} "
            f"({p.labelled}) | {lam} | {judge} |"
        )
    note = (
        "Differences of the labelled metrics are mean label differences on the rubric's scale: the labels corrected "
        "by the metric on every shared sample (PPI++; Angelopoulos et al. 2023). Judge only: the metric alone on "
        "that scale, as if it were right."
    )
    return "\n".join(lines) + f"\n\n<sub>{md(note)}</sub>"


def _margin(row: GateRow) -> str:
    return "" if row.margin is None else f", margin {row.margin:g}"


def _usage(rows) -> Usage:
    costs = [r.cost_usd for r in rows]
    eval_costs = [r.evaluation.cost_usd for r in rows]
    return Usage(
        sum(r.input_tokens for r in rows),
        sum(r.output_tokens for r in rows),
        sum(r.calls for r in rows),
        None if None in costs else sum(costs),
        sum(r.evaluation.input_tokens for r in rows),
        sum(r.evaluation.output_tokens for r in rows),
        sum(r.evaluation.calls for r in rows),
        None if None in eval_costs else sum(eval_costs),
        sorted({m for r in rows for m in [*r.unpriced_models, *r.evaluation.unpriced]}),
    )


@dataclasses.dataclass(frozen=True)
class Usage:
    """Tokens, model calls and USD of the systems' answers (generation) and of their scoring (evaluation)."""

    input_tokens: int
    output_tokens: int
    calls: int
    cost_usd: float | None
    eval_input_tokens: int
    eval_output_tokens: int
    eval_calls: int
    eval_cost_usd: float | None
    unpriced: list[str]


COST_LINES: list[tuple[str, Callable[[Usage], float | None], int]] = [
    ("generation input tokens", lambda u: u.input_tokens, 0),
    ("generation output tokens", lambda u: u.output_tokens, 0),
    ("generation model calls", lambda u: u.calls, 0),
    ("generation cost $", lambda u: u.cost_usd, 4),
    ("evaluation input tokens", lambda u: u.eval_input_tokens, 0),
    ("evaluation output tokens", lambda u: u.eval_output_tokens, 0),
    ("evaluation model calls", lambda u: u.eval_calls, 0),
    ("evaluation cost $", lambda u: u.eval_cost_usd, 4),
]


def _cost_table(base: Usage, cand: Usage) -> str:
    lines = [
        "### Cost (systems in both runs)",
        "",
        "| | baseline | candidate | change |",
        "| --- | ---: | ---: | ---: |",
    ]
    for label, get, digits in COST_LINES:
        b, c = get(base), get(cand)
        lines.append(f"| {label} | {_amount(b, digits)} | {_amount(c, digits)} | {_change(b, c, digits)} |")
    unpriced = sorted(set(base.unpriced) | set(cand.unpriced))
    if unpriced:
        lines += ["", f"? no price for {md(', '.join(unpriced))}: add one under [llm.prices] in the config."]
    lines += ["", "Responses served from the response cache count as if the call was made (list prices)."]
    return "\n".join(lines)


def _health_table(result: GateResult) -> str:
    lines = [
        "### Failures and unscored values",
        "",
        "| system | failed outputs | outputs not run | unscored values |",
        "| --- | ---: | ---: | ---: |",
    ]
    for h in result.health:
        lines.append(
            f"| {md(h.system)} | {h.baseline_failed} → {h.candidate_failed} | {h.baseline_missing} → "
            f"{h.candidate_missing} | {h.baseline_unscored} → {h.candidate_unscored} |"
        )
    return "\n".join(lines + ["", "Each cell: baseline → candidate, over each run's samples."])


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _mean(value: float | None, unscored: int) -> str:
    return _num(value) + (f" (+{unscored} unscored)" if unscored else "")


def _diff(row: GateRow) -> str:
    if row.mean_diff is None:
        return "-"
    if row.level is None:
        return f"{row.mean_diff:+.3f}"
    low = "open" if row.ci_low is None else f"{row.ci_low:+.3f}"
    high = "open" if row.ci_high is None else f"{row.ci_high:+.3f}"
    return f"{row.mean_diff:+.3f} [{low}, {high}] ({confidence(row.level)} CI)"


def _p(p: float | None) -> str:
    return "-" if p is None else "< 0.001" if p < 0.001 else f"{p:.3f}"


def _amount(value: float | None, digits: int) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def _change(base: float | None, cand: float | None, digits: int) -> str:
    if base is None or cand is None:
        return "?"
    delta = cand - base
    share = f" ({delta / base:+.0%})" if base else ""
    return f"{delta:+,.{digits}f}{share}"
