"""The robustness section of the HTML report: the same profile and tables as ``ragassay robustness RUN``
(:func:`ragassay.analysis.robustness.profile`, rendered by :mod:`ragassay.robustness_tables`), as HTML."""

from __future__ import annotations

from .markup import esc, note, section, table


def robustness_section(run, alpha: float = 0.05, seed: int = 0) -> str:
    """The profile of ``run`` as a section; empty when the run has no perturbed system."""
    from ..analysis.robustness import perturbations, profile
    from ..errors import RagassayError
    from ..robustness_tables import profile_tables

    if not perturbations(run):
        return ""
    try:
        result = profile(run, alpha=alpha, seed=seed)
    except RagassayError as exc:
        return section("robustness", "Robustness", note(f"No robustness profile: {exc}"))
    parts = [html_table(t) for t in profile_tables(result).values()]
    if result.groups_reason:
        parts.append(note(f"GRAMMAR groups: not shown ({result.groups_reason})"))
    legend = "each perturbed system against its unperturbed twin (docs/robustness.md)"
    return section("robustness", "Robustness", "".join(parts), legend)


def html_table(t) -> str:
    """A :class:`ragassay.tables.Table` as HTML: its text columns, every cell escaped, notes below."""
    columns = [c for c in t.columns if c.in_text]
    rows = [[esc(c.text(row)) for c in columns] for row in t.rows]
    return table([c.title for c in columns], rows, caption=t.title) + "".join(note(n) for n in t.notes)
