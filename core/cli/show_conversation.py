"""``ragassay show RUN --conversation CID`` and ``--conversations``: a conversation turn by turn, and the run's
conversations with where each first failed (the data: :mod:`ragassay.present.conversation_view`)."""

from __future__ import annotations

from .common import fmt
from .render import Column, Table, esc

SNIPPET = 160  # characters of each context shown in the terminal
_TONE_STYLE = {"good": "green", "warn": "yellow", "bad": "red"}


def read_conversation(store, run_id: str, conversation: str, systems: list[str], metric, threshold) -> dict:
    """The conversation's detail (:func:`ragassay.present.conversation_view.conversation_detail`): the run read
    once, the outputs of the conversation's turns only."""
    from ..analysis.conversations_failures import failure_rule
    from ..present.conversation_view import check_systems, conversation_detail, conversation_positions
    from ..results import read_payloads, read_run

    run = read_run(store, run_id)
    shown = check_systems(run, systems)
    positions = conversation_positions(run, conversation)
    payloads = read_payloads(store, run.id, [run.question_ids[i] for i in positions])
    return conversation_detail(run, conversation, payloads, shown, failure_rule(run, metric, threshold))


def read_listing(store, run_id: str, metric, threshold) -> Table:
    """The run's conversations, one row per conversation and system, as a table (first failure by the rule)."""
    from ..analysis.conversations import is_turn_run
    from ..analysis.conversations_failures import failure_rule
    from ..errors import ConfigError
    from ..present.conversation_view import conversation_listing
    from ..results import read_run

    run = read_run(store, run_id)
    if not is_turn_run(run):
        raise ConfigError(f"run {run.id[:12]} has no conversation: none of its samples is a conversation turn")
    rule = failure_rule(run, metric, threshold)
    rows = conversation_listing(run, rule)
    columns = [Column("conversation"), Column("system"), Column("turns", numeric=True), Column("answerability")]
    columns += [Column("first_failure", "first failing turn", numeric=True), Column("blame"), Column("reason")]
    notes = [
        f"first failing turn: {rule.describe()}" if rule else "no turn_blame metric: give --metric and --threshold"
    ]
    return Table(f"conversations of run {run.id[:12]}", columns, rows, notes, id_columns=("conversation", "system"))


def turns_table(detail: dict) -> Table:
    """One row per turn and system: question, query, reference contexts retrieved, answer, claim support counts,
    blame, and whether it is the conversation's first failure (``--format csv|markdown``)."""
    rows = []
    for turn in detail["turns"]:
        for e in turn["systems"]:
            claims = (e["claims"] or {}).get("claims") or []
            support = {s: sum(1 for c in claims if c["support"] == s) for s in ("context", "history", "none")}
            rows.append(
                {
                    "turn": turn["turn"],
                    "system": e["system"],
                    "status": e["status"],
                    "question": turn["question"],
                    "query": e["query"],
                    "references_retrieved": sum(1 for c in e["contexts"] if c["reference"]),
                    "answer": e["answer"],
                    **{f"claims_{s}": n for s, n in support.items()},
                    "blame": (e["blame"] or {}).get("blame"),
                    "first_failure": e["first_failure"],
                }
            )
    keys = ["turn", "system", "status", "question", "query", "references_retrieved", "answer"]
    keys += ["claims_context", "claims_history", "claims_none", "blame", "first_failure"]
    columns = [Column(k, numeric=k in ("turn", "references_retrieved") or k.startswith("claims_")) for k in keys]
    return Table(f"conversation {detail['conversation_id']}", columns, rows, id_columns=("turn", "system"))


def print_conversation(out, detail: dict) -> None:
    """The conversation in the terminal: first failures, the opening, then each turn with every system's part."""
    turns = detail["turns"]
    out.print(
        f"[bold]conversation[/] {esc(detail['conversation_id'])}: {len(turns)} turns; "
        f"systems: {esc(', '.join(detail['systems']))}",
        highlight=False,
    )
    _print_failures(out, detail)
    if detail["opening"]:
        out.print("[bold]before the first evaluated turn[/]:")
        for said in detail["opening"]:
            out.print(esc(f"  {said['speaker']}: {said['text']}"), highlight=False)
    for turn in turns:
        label = f", {turn['answerability']}" if turn["answerability"] else ""
        out.rule(esc(f"turn {turn['turn']} ({turn['question_id']}{label})"))
        out.print(f"[bold]user[/]: {esc(turn['question'])}", highlight=False)
        out.print(f"reference ids: {esc(', '.join(turn['reference_context_ids']) or '-')}", highlight=False)
        for entry in turn["systems"]:
            _print_system_turn(out, entry)
    out.print(
        f"(contexts cut to {SNIPPET} characters, --format json has them whole; (reference): one of the turn's "
        "reference ids)",
        highlight=False,
    )


def _print_failures(out, detail: dict) -> None:
    if detail["rule"] is None:
        out.print("no turn_blame metric in this run: give --metric and --threshold to find the first failing turn")
        return
    out.print(f"[bold]first failure[/]: {esc(detail['rule'])}", highlight=False)
    for system, first in detail["first_failures"].items():
        if first is None:
            out.print(f"  {esc(system)}: no failing turn", highlight=False)
        else:
            why = first["blame"] or "below the threshold"
            reason = f": {first['reason']}" if first["reason"] else ""
            out.print(esc(f"  {system}: turn {first['turn']} ({why}){reason}"), highlight=False)


def _print_system_turn(out, entry: dict) -> None:
    marks = [entry["status"]]
    if entry["blame"]:
        marks.append(f"blame {entry['blame']['blame']}")
    head = f"[bold]{esc(entry['system'])}[/]: {esc(', '.join(marks))}"
    out.print(head + (" [red bold]FIRST FAILURE[/]" if entry["first_failure"] else ""), highlight=False)
    if entry["status"] == "failed":
        out.print(f"  [red]error[/]: {esc(entry['error'])}", highlight=False)
        return
    query = entry["query"] if entry["query"] is not None else "(the question itself)"
    out.print(f"  query: {esc(query)}", highlight=False)
    for i, context in enumerate(entry["contexts"], start=1):
        mark = " (reference)" if context["reference"] else ""
        snippet = " ".join(context["text"].split())[:SNIPPET]
        out.print(esc(f"  [{i}] {context['id']}{mark}: {snippet}"), highlight=False)
    out.print(f"  answer: {esc(entry['answer'])}", highlight=False)
    claims = entry["claims"]
    if claims:
        out.print(f"  claims ({len(claims['claims'])}, support stored with {esc(claims['metric'])}):", highlight=False)
        for claim in claims["claims"]:
            where = f"turn {claim['turn']}" if claim["turn"] is not None else ""
            where = where or (f"context [{claim['context'] + 1}]" if claim["context"] is not None else "")  # as listed
            style = _TONE_STYLE[claim["tone"]]
            place = esc(f" ({where})") if where else ""
            out.print(f"    [{style}]{esc(claim['support'])}[/]{place}: {esc(claim['text'])}", highlight=False)
    values = [
        f"{m['name']} {fmt(m['value'])}" if m["value"] is not None else f"{m['name']} unscored"
        for m in entry["metrics"]
    ]
    if values:
        out.print(f"  {esc(', '.join(values))}", highlight=False)


def print_turn_history(out, sample, run_id: str) -> None:
    """For a sample that is a conversation's turn: the conversation before it, and how to see every turn."""
    out.print(f"[bold]turn {sample.turn} of conversation[/] {esc(sample.conversation_id)}; before it:", highlight=False)
    for said in sample.history:
        out.print(esc(f"  {said.speaker}: {said.text}"), highlight=False)
    out.print(
        esc(f"(every turn: ragassay show {run_id[:12]} --conversation {sample.conversation_id})"), highlight=False
    )
