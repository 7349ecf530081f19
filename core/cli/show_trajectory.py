"""``ragassay show RUN SAMPLE --trajectory``: each system's trajectory for one sample as a timeline, with the gold per
hop and the blamed step marked (the data: :mod:`ragassay.present.trajectory_view`); ``ragassay show RUN SAMPLE``
prints the same timeline under each output that has a trajectory."""

from __future__ import annotations

from .common import fmt
from .render import Column, Table, esc

INDENT = "  "  # one level of nesting (a nested agent's steps)


def timelines(run, detail: dict, systems: list[str]) -> list[dict]:
    """Per output of the sample (``systems``: only those, when given) its system, status and timeline (None:
    no trajectory), in the run's system order."""
    from ..present.trajectory_view import trajectory_timeline

    found = []
    for item in detail["outputs"]:
        system = item["row"]["system"]
        if systems and system not in systems:
            continue
        scored = {m["metric"]: (m["value"], m["details"]) for m in item["metrics"]}
        timeline = trajectory_timeline(run, detail["sample"], item["output"], scored)
        found.append({"system": system, "status": item["row"]["status"], "timeline": timeline})
    return found


def trajectory_data(detail: dict, shown: list[dict]) -> dict:
    """What ``--format json`` prints: the sample's id, question and hops, and each system's timeline."""
    sample = detail["sample"]
    return {
        "question_id": sample.question_id,
        "question": sample.question,
        "hops": [hop.model_dump(mode="json") for hop in sample.hops],
        "systems": shown,
    }


def steps_table(detail: dict, shown: list[dict]) -> Table:
    """One row per system and step (``--format csv|markdown``)."""
    from ..present.trajectory_view import step_rows

    rows = [row for entry in shown if entry["timeline"] for row in step_rows(entry["system"], entry["timeline"])]
    numeric = ("step", "depth", "tokens", "latency_s")
    keys = ["system", "step", "id", "depth", "kind", "name", "detail", "retrieved", "tokens", "latency_s", "blamed"]
    columns = [Column(k, numeric=k in numeric) for k in keys]
    title = f"trajectories of sample {detail['sample'].question_id}"
    return Table(title, columns, rows, id_columns=("system", "step"))


def print_trajectories(out, detail: dict, shown: list[dict]) -> None:
    """Every shown system's timeline in the terminal, after the question and its gold per hop."""
    sample = detail["sample"]
    out.print(f"[bold]question[/] ({esc(sample.question_id)}): {esc(sample.question)}", highlight=False)
    for entry in shown:
        out.rule(f"system {esc(entry['system'])}: {esc(entry['status'])}")
        if entry["timeline"] is None:
            out.print("no trajectory (a single-shot output, or it failed)", highlight=False)
            continue
        print_timeline(out, entry["timeline"])


def print_timeline(out, timeline: dict) -> None:
    """One trajectory: its totals and blame, the gold per hop, then each step (nested agents indented)."""
    steps = timeline["steps"]
    latency = f", {fmt(timeline['latency_s'])} s" if timeline["latency_s"] is not None else ""
    out.print(f"[bold]trajectory[/]: {len(steps)} steps, {timeline['tokens']} tokens{latency}", highlight=False)
    _print_blame(out, timeline["blame"], steps)
    for hop in timeline["hops"]:
        out.print(esc(f"  {_hop_line(hop)}"), highlight=False)
    for step in steps:
        _print_step(out, step)


def _print_blame(out, blame: dict | None, steps: list[dict]) -> None:
    if blame is None:
        return
    if blame["blame"] == "ok":
        out.print(f"[green]blame ok[/] ({esc(blame['metric'])})", highlight=False)
        return
    where = next((f" at step {s['index']} ({s['id']})" for s in steps if s["blamed"]), "")
    hop = f", hop {blame['hop']}" if blame["hop"] is not None else ""
    reason = f": {blame['reason']}" if blame["reason"] else ""
    out.print(f"[red bold]blame {esc(blame['blame'])}[/]" + esc(f"{where}{hop}{reason}"), highlight=False)


def _hop_line(hop: dict) -> str:
    state = {True: "found", False: "NOT FOUND", None: "not scored"}[hop["found"]]
    by = f" by {hop['step']}" if hop["step"] else ""
    gold = ", ".join(hop["gold"]) or "-"
    return f"hop {hop['index']} ({hop['description'] or 'no description'}): gold {gold}: {state}{by}"


def _print_step(out, step: dict) -> None:
    pad = INDENT * step["depth"]
    costs = []
    if step["tokens"] is not None:
        costs.append(f"{step['tokens']} tokens")
    if step["latency_s"] is not None:
        costs.append(f"{fmt(step['latency_s'])} s")
    head = f"{pad}{step['index']}. {step['kind']} {step['name']}".rstrip()
    head += f" [{', '.join(costs)}]" if costs else ""
    mark = " [red bold]<- BLAMED[/]" if step["blamed"] else ""
    out.print(esc(head) + mark, highlight=False)
    for label, text in step["lines"]:
        style = "red" if label == "error" else "bold"
        out.print(f"{pad}{INDENT}[{style}]{esc(label)}[/]: {esc(text)}", highlight=False)
    for i, context in enumerate(step["contexts"], start=1):
        document = f" ({context['document']})" if context["document"] else ""
        marks = [f"gold hop {h}" for h in context["hops"]] or (["reference"] if context["reference"] else [])
        mark = f" <- {', '.join(marks)}" if marks else ""
        out.print(esc(f"{pad}{INDENT}[{i}] {context['id']}{document}{mark}"), highlight=False)
