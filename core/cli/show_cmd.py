"""``ragassay show``: one sample of a run with every system's contexts, answer and scores."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, format_option, get_run, open_results, output_format
from .render import Column, Table, emit, esc


@click.command("show")
@click.argument("run")
@click.argument("sample", required=False)
@click.option("--conversation", "conversation", default=None, help="Show this conversation turn by turn.")
@click.option("--conversations", "listing", is_flag=True, help="List the run's conversations and first failures.")
@click.option("--trajectory", is_flag=True, help="With SAMPLE: each system's trajectory as a timeline.")
@click.option(
    "--system", "systems", multiple=True, help="With --conversation or --trajectory: only this system (repeatable)."
)
@click.option("--metric", default=None, help="The metric that tells a failing turn (default: the run's turn_blame).")
@click.option("--threshold", type=float, default=None, help="With --metric: a turn fails below this value.")
@config_option
@db_option
@format_option
def show_command(
    run: str,
    sample: str | None,
    conversation: str | None,
    listing: bool,
    trajectory: bool,
    systems: tuple[str, ...],
    metric: str | None,
    threshold: float | None,
    config_path: Path,
    db: str | None,
    fmt: str | None,
) -> None:
    """One SAMPLE (question_id) of RUN: question, references, and each system's contexts, answer, scores; a
    conversation's turn first shows the conversation before it.

    --conversation CID shows a conversation turn by turn: each system's query (its rewrite), retrieved contexts
    (references marked), answer, claims with their support, blame, and where it first failed (by the run's
    turn_blame metric, or --metric and --threshold). --conversations lists the run's conversations.

    --trajectory shows each system's trajectory for SAMPLE as a timeline: every step in order (nested agents
    indented) with its kind, name, query, arguments, result or error, the retrieved ids with the gold of each hop
    marked, tokens and latency, and the step the run's step-blame metric blamed. Without it, the timeline is
    printed under each output that has one.

    --format json gives everything; csv and markdown give one row per system and metric or judge (a
    conversation: one row per turn and system; --trajectory: one row per system and step).
    """
    from ..results import read_sample

    fmt = output_format(fmt)
    if trajectory and sample is None:
        raise click.UsageError("--trajectory goes with SAMPLE: ragassay show RUN SAMPLE --trajectory")
    _check_choice(sample, conversation, listing)
    if conversation is None and not trajectory and systems:
        raise click.UsageError("--system goes with --conversation CID or SAMPLE --trajectory")
    if sample is not None and (metric is not None or threshold is not None):
        raise click.UsageError("--metric and --threshold go with --conversation CID or --conversations")
    store = open_results(config_path, db, (run,))
    try:
        run_id = get_run(store, run)["id"]
        if conversation is not None or listing:
            _show_conversations(store, run_id, conversation, list(systems), metric, threshold, fmt)
            return
        sample_run, payloads = read_sample(store, run_id, sample)
    finally:
        store.close()
    detail = sample_detail(sample_run, payloads)
    if trajectory:
        _show_trajectories(sample_run, detail, list(systems), fmt)
    elif fmt == "rich":
        _print_detail(console(), detail, run_id, sample_run)
    else:
        emit(console(), [scores_table(detail)], fmt, data=_jsonable(detail) if fmt == "json" else None)


def _check_choice(sample: str | None, conversation: str | None, listing: bool) -> None:
    chosen = [
        name
        for name, given in (("SAMPLE", sample), ("--conversation", conversation), ("--conversations", listing))
        if given
    ]
    if len(chosen) != 1:
        what = ", ".join(chosen) if chosen else "none of them"
        raise click.UsageError(f"give one of SAMPLE, --conversation CID or --conversations (got {what})")


def _show_conversations(store, run_id: str, conversation, systems: list[str], metric, threshold, fmt: str) -> None:
    from .show_conversation import print_conversation, read_conversation, read_listing, turns_table

    if conversation is None:
        emit(console(), [read_listing(store, run_id, metric, threshold)], fmt)
        return
    detail = read_conversation(store, run_id, conversation, systems, metric, threshold)
    if fmt == "rich":
        print_conversation(console(), detail)
    else:
        emit(console(), [turns_table(detail)], fmt, data=detail if fmt == "json" else None)


def _show_trajectories(run, detail: dict, systems: list[str], fmt: str) -> None:
    from ..present.conversation_view import check_systems
    from .show_trajectory import print_trajectories, steps_table, timelines, trajectory_data

    shown = timelines(run, detail, check_systems(run, systems) if systems else [])
    if fmt == "rich":
        print_trajectories(console(), detail, shown)
    else:
        data = trajectory_data(detail, shown) if fmt == "json" else None
        emit(console(), [steps_table(detail, shown)], fmt, data=data)


def sample_detail(run, payloads: dict) -> dict:
    """The sample of a one-sample read (:func:`ragassay.results.read_sample`) with, per stored output of it in the
    run's system order (the config's), the output's row (every stored column), the output itself, and its metric
    values and judgements of repeat 0 (every stored column, ``details`` parsed), by label."""
    rows = run.stored_rows
    order = {name: index for index, name in enumerate(run.systems)}
    outputs = []
    for row in sorted(rows.outputs, key=lambda r: order.get(r["system"], len(order))):
        key = (row["system"], row["question_id"])
        outputs.append(
            {
                "row": row,
                "output": payloads.get(key),
                "metrics": _scores_of(rows.metrics, key, "metric"),
                "judgements": _scores_of(rows.judgements, key, "judge"),
            }
        )
    return {"sample": run.samples[0], "outputs": outputs}


def _scores_of(rows: list[dict], key: tuple[str, str], label: str) -> list[dict]:
    """The repeat-0 rows of one output (``key``: its system and question id, which the rows drop), by label, each
    with ``details`` parsed from ``details_json``, last."""
    found = []
    for row in sorted((r for r in rows if (r["system"], r["question_id"]) == key), key=lambda r: r[label]):
        if row["repeat"] == 0:
            values = {name: value for name, value in row.items() if name not in ("system", "question_id")}
            raw = values.pop("details_json", None)
            found.append({**values, "details": json.loads(raw) if raw else {}})
    return found


def _jsonable(detail: dict) -> dict:
    return {
        "sample": detail["sample"].model_dump(mode="json"),
        "outputs": [
            {
                **o["row"],
                "output": o["output"].model_dump(mode="json") if o["output"] else None,
                "output_json": None,
                "metrics": o["metrics"],
                "judgements": o["judgements"],
            }
            for o in detail["outputs"]
        ],
    }


def scores_table(detail: dict) -> Table:
    """One row per system and metric or judge: value (or why unscored), and each system's answer."""
    rows = []
    for item in detail["outputs"]:
        row, output = item["row"], item["output"]
        base = {"system": row["system"], "status": row["status"], "answer": output.answer if output else None}
        for metric in item["metrics"]:
            rows.append(
                {**base, "score": metric["metric"], "value": metric["value"], "note": metric["unscored_reason"] or ""}
            )
        for judgement in item["judgements"]:
            rows.append(
                {
                    **base,
                    "score": f"judge:{judgement['judge']}",
                    "value": judgement.get("score"),
                    "note": f"{judgement['verdict']}: {judgement['explanation'] or ''}",
                }
            )
        if not item["metrics"] and not item["judgements"]:
            rows.append({**base, "score": None, "value": None, "note": row["error"] or ""})
    columns = [
        Column("system"),
        Column("status"),
        Column("score"),
        Column("value", numeric=True),
        Column("note"),
        Column("answer"),
    ]
    return Table(f"sample {detail['sample'].question_id}", columns, rows, id_columns=("system", "score"))


def _print_detail(out, detail: dict, run_id: str = "", run=None) -> None:
    sample = detail["sample"]
    if sample.conversation_id is not None:
        from .show_conversation import print_turn_history

        print_turn_history(out, sample, run_id)
    out.print(f"[bold]question[/] ({esc(sample.question_id)}): {esc(sample.question)}")
    out.print(f"[bold]reference answers[/]: {esc('; '.join(sample.reference_answers) or '-')}")
    out.print(f"[bold]reference context ids[/]: {esc(', '.join(sample.reference_context_ids) or '-')}")
    for item in detail["outputs"]:
        row, output = item["row"], item["output"]
        out.rule(f"system {esc(row['system'])}: {esc(row['status'])}")
        if row["status"] == "failed":
            out.print(f"[red]error[/]: {esc(row['error'] or '')}")
            continue
        references = reference_flags(sample, output)
        for i, (cid, text) in enumerate(zip(output.context_ids, output.contexts), start=1):
            snippet = " ".join(text.split())[:160]
            mark = " (reference)" if references[i - 1] else ""
            out.print(esc(f"  [{i}] {cid}{mark}: {snippet}"), highlight=False)
        out.print(f"[bold]answer[/]: {esc(output.answer)}")
        if run is not None and output.trajectory:
            from .show_trajectory import print_timeline, timelines

            (shown,) = timelines(run, {"sample": sample, "outputs": [item]}, [])
            print_timeline(out, shown["timeline"])
        for metric in item["metrics"]:
            value = fmt(metric["value"]) if metric["value"] is not None else f"unscored: {metric['unscored_reason']}"
            out.print(f"  {esc(metric['metric'])}: {esc(value)}{_cost(metric)}")
            _print_details(out, metric.get("details"))
        _print_claims(out, item["metrics"])
        for judgement in item["judgements"]:
            score = "" if judgement.get("score") is None else f" {fmt(judgement['score'])}"
            out.print(
                f"  judge {esc(judgement['judge'])}: {esc(judgement['verdict'])}{score} "
                f"({esc(judgement['explanation'] or '')}){_cost(judgement)}"
            )
            _print_details(out, judgement.get("details"))
    out.print(
        "(contexts cut to 160 characters, --format json has them whole; (reference): one of the sample's references)",
        highlight=False,
    )


def reference_flags(sample, output) -> list[bool]:
    """For each retrieved context: is its id, or its document's id, one of the sample's reference context ids?
    (The rule of the retrieval metrics, e.g. ``recall_at_k``: references may name documents or chunks.)"""
    references = set(sample.reference_context_ids)
    documents = output.context_document_ids
    return [
        cid in references or (i < len(documents) and documents[i] in references)
        for i, cid in enumerate(output.context_ids)
    ]


def _cost(row: dict) -> str:
    """' [2 calls, 812 tokens, $0.0004]' for a metric value or judgement that called models."""
    if not row.get("calls") and not row.get("cache_hits"):
        return ""
    cost = "?" if row.get("cost_usd") is None else f"${row['cost_usd']:.4f}"
    return esc(
        f" [{row['calls']} calls, {row['cache_hits']} cached, "
        f"{row['input_tokens'] + row['output_tokens']} tokens, {cost}]"
    )


#: Claim checks (docs/judges.md) are printed as the claim view after the metrics, not as raw JSON.
_CLAIM_KEYS = ("checks", "explanations")
_TONE_STYLE = {"good": "green", "warn": "yellow", "bad": "red"}


def _print_claims(out, metrics: list[dict]) -> None:
    """The claims of the output and their marks, from the first metric that stores claim checks."""
    from ..present.claim_view import claim_view, find_checks

    found = find_checks((m["metric"], m.get("details")) for m in metrics)
    if found is None:
        return
    label, checks = found
    view = claim_view(checks)
    for side, title in (("reference", "reference answer"), ("response", "response")):
        out.print(f"  [bold]claims of the {title}[/] ({len(view[side])}, checks stored with {esc(label)}):")
        for claim in view[side]:
            style = _TONE_STYLE[claim["tone"]]
            chunk = esc(f" [chunk {claim['chunk']}]") if claim["chunk"] else ""
            out.print(f"    [{style}]{esc(claim['mark'])}[/]{chunk}: {esc(claim['text'])}", highlight=False)


def _print_details(out, details: dict | None, limit: int = 20) -> None:
    """A metric's or judge's details, one line per entry; list entries (segments, claims) one per line."""
    for key, value in (details or {}).items():
        if key in _CLAIM_KEYS and isinstance(details.get("checks"), dict):
            out.print(f"    {esc(key)}: (shown as claims below; --format json has them whole)", highlight=False)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out.print(f"    {esc(key)}:", highlight=False)
            for entry in value[:limit]:
                out.print("      - " + esc("; ".join(f"{k}: {_short(v)}" for k, v in entry.items())), highlight=False)
            if len(value) > limit:
                out.print(f"      ... {len(value) - limit} more (--format json has them all)", highlight=False)
        else:
            out.print(f"    {esc(key)}: {esc(_short(value))}", highlight=False)


def _short(value, width: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


COMMANDS = [show_command]
