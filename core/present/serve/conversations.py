"""What the conversation pages of ``ragassay serve`` compute, from the run at one version (a
:class:`ragassay.present.serve.cache.RunEntry`) and nothing of the request:

- ``/runs/{run}/conversations``: the sections of page ``conversations`` (quality by turn depth and answerability
  class, answerability behaviour, first failures: :mod:`ragassay.present.sections.conversations`), then every
  conversation with each system's first failing turn, linked to its page (:func:`listing`);
- ``/runs/{run}/conversations/{conversation_id}``: one conversation turn by turn (:func:`detail`,
  :func:`ragassay.present.conversation_view.conversation_detail`); ``?system=S`` (repeatable) shows those systems.

Both are kept with the run's version, as every page is (:mod:`.cache`).
"""

from __future__ import annotations


def listing(entry) -> tuple[list[dict], str | None]:
    """(every conversation and system's row, the failure rule in words or None), kept per run version."""
    from ...analysis.conversations_failures import failure_rule
    from ..conversation_view import conversation_listing

    def compute():
        run = entry.run()
        rule = failure_rule(run)
        return conversation_listing(run, rule), rule.describe() if rule is not None else None

    return entry.get(("conversation listing",), compute)


def detail(entry, conversation_id: str, systems: tuple[str, ...] = ()) -> dict:
    """The conversation ``conversation_id`` of the entry's run (``systems``: those shown, default all), with its
    turns' stored outputs read for it alone; kept per run version."""
    from ...analysis.conversations_failures import failure_rule
    from ...results import read_payloads
    from ..conversation_view import check_systems, conversation_detail, conversation_positions

    def compute():
        run = entry.run()
        shown = check_systems(run, list(systems))
        positions = conversation_positions(run, conversation_id)
        payloads = read_payloads(entry.store, run.id, [run.question_ids[i] for i in positions])
        return conversation_detail(run, conversation_id, payloads, shown, failure_rule(run))

    return entry.get(("conversation", conversation_id, systems), compute)
