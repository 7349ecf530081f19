"""The gate's markdown summary, written for a pull-request comment (``ragassay gate --summary FILE``).

A headline (✅ no regression / ❌ regression in N of M comparisons), what was compared with what, a table per
system (metric, baseline and candidate means, difference with its 95% interval, Holm p, verdict), the cost
delta, failures and unscored values, notes, and links to the HTML report. Every string that comes from a
user (system and metric names, paths, URLs, reasons) goes through :func:`md` or :func:`md_url`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .gate import GateResult, GateRow, Usage
from .verdicts import BETTER, NOT_COMPARABLE, WORSE

DOCS = "docs/statistics.md"
ICONS = {WORSE: "❌ ", BETTER: "🟢 ", NOT_COMPARABLE: "⚠️ "}
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
    parts = [_headline(result), _context(result), _links(report_url, html_path)]
    if result.regressions:
        parts.append("### Regressions\n\n" + "\n".join(f"- {_regression(row)}" for row in result.regressions))
    for system in dict.fromkeys(row.system for row in result.rows):
        parts.append(_system_table(system, [row for row in result.rows if row.system == system]))
    parts += [_cost_table(result.cost_baseline, result.cost_candidate), _health_table(result)]
    if result.notes:
        parts.append("### Notes\n\n" + "\n".join(f"- {md(note)}" for note in result.notes))
    parts.append(f"<sub>{md(result.method)}; seed {result.seed}. What the verdicts mean: {DOCS}.</sub>")
    return "\n\n".join(part for part in parts if part) + "\n"


def _headline(result: GateResult) -> str:
    m = len(result.compared)
    if result.regressions:
        return f"## ❌ ragassay gate: regression in {len(result.regressions)} of {m} comparisons"
    return f"## ✅ ragassay gate: no regression ({m} comparisons)"


def _context(result: GateResult) -> str:
    source = f" from {md(result.baseline_source)}" if result.baseline_source else ""
    extra = []
    if result.candidate_only_samples:
        extra.append(f"{result.candidate_only_samples} only in the candidate")
    if result.baseline_only_samples:
        extra.append(f"{result.baseline_only_samples} only in the baseline")
    only = f" ({', '.join(extra)}: not compared)" if extra else ""
    return (
        f"Candidate run `{result.candidate_run[:12]}` against baseline run `{result.baseline_run[:12]}`{source}, "
        f"paired by question_id on {result.shared_samples} samples in both runs{only}. Each system against its "
        f"namesake: paired sign-flip permutation test, Holm-adjusted over all {len(result.compared)} "
        f"comparisons, alpha {result.alpha:g}."
    )


def _links(report_url: str | None, html_path: str | None) -> str:
    if report_url:
        return f"📊 [HTML report]({md_url(report_url)})"
    if html_path:
        return f"📊 HTML report: {md(html_path)} (in this job's artifacts)"
    return ""


def _regression(row: GateRow) -> str:
    return (
        f"**{md(row.system)}** is worse on **{md(row.metric)}**: {_num(row.baseline_mean)} → "
        f"{_num(row.candidate_mean)} ({_diff(row)}, Holm p {_p(row.p_holm)}, n = {row.n})"
    )


def _system_table(system: str, rows: list[GateRow]) -> str:
    lines = [
        f"### {md(system)}",
        "",
        "| metric | baseline | candidate | difference [95% CI] | p (Holm) | n | verdict |",
        "| --- | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for row in rows:
        arrow = "↑" if row.direction == "higher" else "↓"
        verdict = ICONS.get(row.verdict, "") + row.verdict + (f": {md(row.reason)}" if row.reason else "")
        lines.append(
            f"| {md(row.metric)} {arrow} | {_mean(row.baseline_mean, row.baseline_unscored)} | "
            f"{_mean(row.candidate_mean, row.candidate_unscored)} | {_diff(row)} | {_p(row.p_holm)} | {row.n} | "
            f"{verdict} |"
        )
    return "\n".join(lines)


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
    interval = "" if row.ci_low is None else f" [{row.ci_low:+.3f}, {row.ci_high:+.3f}]"
    return f"{row.mean_diff:+.3f}{interval}"


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
