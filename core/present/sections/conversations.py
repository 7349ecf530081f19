"""The conversations section of the HTML report and ``ragassay serve``: quality by turn depth and by answerability
class, answerability behaviour (per-class recall and balanced accuracy, the confusion), and where conversations
first failed, per system (:mod:`ragassay.analysis.conversations`, :mod:`ragassay.analysis.conversations_answerability`,
:mod:`ragassay.analysis.conversations_failures`). Shown only for a run whose samples include conversation turns."""

from __future__ import annotations

from ..blocks import Cell, Note, Section, Table
from ..templating import interval, num

ANCHOR, TITLE = "conversations", "Conversations"
LEGEND = (
    "turns of one conversation are not independent: every interval resamples whole conversations, 95% (means: "
    "cluster-bootstrap BCa; recalls and balanced accuracy: percentile; docs/conversations.md); n: turns "
    "(conversations)."
)


def conversations_section(run, seed: int = 0) -> Section | None:
    """The section for ``run`` (:class:`ragassay.results.RunData`); None when no sample is a conversation turn."""
    from ...analysis.conversations import by_answerability, by_depth, is_turn_run
    from ...analysis.conversations_answerability import answerability

    if not is_turn_run(run):
        return None
    depth = by_depth(run, seed=seed)
    parts: list = [Note(f"{depth.turns:,} turns in {depth.conversations:,} conversations.")]
    parts.append(breakdown_table(depth, "turn", "by turn depth (the user's turn index)"))
    if any(s.answerability for s in run.samples if s.conversation_id is not None):
        parts.append(breakdown_table(by_answerability(run, seed=seed), "answerability", "by answerability class"))
    scores = answerability(run, seed=seed)
    if scores:
        parts += [recall_table(scores), confusion_table(scores)]
    parts += failure_parts(run)
    return Section(ANCHOR, TITLE, parts, LEGEND)


def stat_cell(stat) -> Cell:
    """A :class:`ragassay.analysis.conversations.ClusterInterval` as a cell: value, interval (or why none), n."""
    n = f"n={stat.n_scored} ({stat.n_conversations})"
    small = f"{interval(stat.ci_low, stat.ci_high)} {n}" if stat.reason is None else f"{n}, no interval"
    return Cell(num(stat.value), small, title=stat.reason or "")


def breakdown_table(result, head: str, caption: str) -> Table:
    """A :class:`ragassay.analysis.conversations.ConversationBreakdown`: (group, system) rows, metric columns."""
    metrics = list(dict.fromkeys(r.metric for r in result.rows if r.stat.n_scored))  # a column with a turn's value
    cells = {(r.group, r.system, r.metric): r.stat for r in result.rows}
    systems = list(dict.fromkeys(r.system for r in result.rows))
    rows = []
    for group in result.groups:
        for system in systems:
            first = cells[(group, system, metrics[0])] if metrics else None
            row = [group, system, num(first.n_turns) if first else "-"]
            rows.append(row + [stat_cell(cells[(group, system, m)]) for m in metrics])
    return Table([head, "system", "turns", *metrics], rows, caption=caption)


def recall_table(scores: list) -> Table:
    """Per system: each class's recall and the balanced accuracy, with intervals."""
    labels = list(dict.fromkeys(label for s in scores for label in s.labels))
    rows = []
    for score in scores:
        recalls = {r.label: r.recall for r in score.recalls}
        cells = [stat_cell(recalls[label]) if label in recalls else "-" for label in labels]
        rows.append([score.system, *cells, stat_cell(score.balanced_accuracy), num(score.unscored)])
    headers = ["system", *(f"recall: {label}" for label in labels), "balanced accuracy", "unscored"]
    metric = scores[0].metric
    notes = [
        f"recall of a class: the share of its turns where {metric} found the expected behaviour; balanced "
        "accuracy: the mean recall of the known classes (Brodersen et al. 2010)."
    ]
    return Table(headers, rows, caption="answerability behaviour", notes=notes)


def confusion_table(scores: list) -> Table:
    """Per system and answerability class: how many turns got each behaviour."""
    behaviours = list(dict.fromkeys(b for s in scores for b in s.behaviours))
    rows = [
        [score.system, label, *(num(score.counts[label].get(b, 0)) for b in behaviours)]
        for score in scores
        for label in score.labels
    ]
    return Table(["system", "class", *behaviours], rows, caption="answerability: class x behaviour (turns)")


def failure_parts(run) -> list:
    """The per-system summary of the first failing turns, by the run's turn_blame metric; a note without one."""
    from ...analysis.conversations_failures import failure_rule, first_failures, summaries

    rule = failure_rule(run)
    if rule is None:
        return [
            Note(
                "No turn_blame metric in this run: no first failing turn (ragassay show --conversation takes "
                "a metric and a threshold)."
            )
        ]
    rows = []
    for s in summaries(first_failures(run, rule), run.systems):
        blames = ", ".join(f"{name} {count}" for name, count in sorted(s.blames.items(), key=lambda kv: -kv[1]))
        rows.append(
            [
                s.system,
                num(s.conversations),
                num(s.turns),
                num(s.failed),
                num(s.mean_first_turn),
                blames or "-",
                num(s.unscored),
            ]
        )
    headers = ["system", "conversations", "turns", "failed", "mean first failing turn", "blame", "unscored turns"]
    return [Table(headers, rows, caption=f"where conversations first failed: {rule.describe()}")]
