"""The robustness section of the HTML report and ``ragassay serve``: the same profile and tables as
``ragassay robustness RUN`` (:func:`ragassay.analysis.robustness.profile`, rendered by
:mod:`ragassay.present.robustness_tables`), as section data (:mod:`ragassay.present.blocks`)."""

from __future__ import annotations

from ..blocks import Note, Section, Table


def robustness_section(run, alpha: float = 0.05, seed: int = 0) -> Section | None:
    """The profile of ``run`` as a section; None when the run has no perturbed system."""
    from ...analysis.robustness import perturbations, profile
    from ...errors import RagassayError
    from ..robustness_tables import profile_tables

    if not perturbations(run):
        return None
    try:
        result = profile(run, alpha=alpha, seed=seed)
    except RagassayError as exc:
        return Section("robustness", "Robustness", [Note(f"No robustness profile: {exc}")])
    parts: list = [block_table(t) for t in profile_tables(result).values()]
    if result.groups_reason:
        parts.append(Note(f"GRAMMAR groups: not shown ({result.groups_reason})"))
    legend = "each perturbed system against its unperturbed twin (docs/robustness.md)"
    return Section("robustness", "Robustness", parts, legend)


def block_table(t) -> Table:
    """A :class:`ragassay.present.tables.Table` as a section table: its text columns, its notes below."""
    columns = [c for c in t.columns if c.in_text]
    rows = [[c.text(row) for c in columns] for row in t.rows]
    return Table([c.title for c in columns], rows, caption=t.title, notes=list(t.notes))
