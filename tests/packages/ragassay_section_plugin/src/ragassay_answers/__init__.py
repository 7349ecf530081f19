"""A third-party plugin with sections: how many outputs each system answered, on a page of its own (``answers``)
and in the HTML report; a note on the run's first page; and a section that always fails.

Its sections are ``answers/<name>``.
"""

from __future__ import annotations

from ragassay import Note, RunSection, Section, Table, hookimpl

PLANT = "<script>alert('plugin')</script>"


class Answered(RunSection):
    """Outputs per system: answered and failed."""

    name = "answered"
    page = "answers"
    tab = "answers per system"

    def sections(self, view):
        rows = []
        for system in view.run.systems:
            outputs = [o for (s, _), o in view.run.outputs.items() if s == system]
            rows.append([system, sum(o.ok for o in outputs), sum(not o.ok for o in outputs)])
        table = Table(["system", "answered", "failed"], rows, caption="outputs per system")
        return Section("answers-answered", "Answered per system", [table, Note(f"Counted by a plugin {PLANT}")])


class FirstPageNote(RunSection):
    """A note on the run's first page, placed first in the report."""

    name = "first_note"
    report_order = 5

    def sections(self, view):
        return Section("answers-note", "A note from the answers plugin", [Note(f"seed {view.seed}")])


class AlwaysFails(RunSection):
    """A section that raises (its page and the report show the error as a note)."""

    name = "fails"
    page = "answers"

    def sections(self, view):
        raise RuntimeError("no answers today")


@hookimpl
def register_sections(register):
    register(Answered)
    register(FirstPageNote)
    register(AlwaysFails)
