"""``ragassay show``: one sample of a run with every system's contexts, answer and scores."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .common import config_option, console, db_option, fmt, open_results


@click.command("show")
@click.argument("run")
@click.argument("sample")
@config_option
@db_option
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show_command(run: str, sample: str, config_path: Path, db: str | None, as_json: bool) -> None:
    """One SAMPLE (question_id) of RUN: question, references, and each system's contexts, answer, scores."""
    store = open_results(config_path, db)
    try:
        run_row = store.get_run(run)
        detail = store.sample_detail(run_row["id"], sample)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps(_jsonable(detail), indent=2, default=str))
        return
    _print_detail(console(), detail)


def _jsonable(detail: dict) -> dict:
    return {
        "sample": detail["sample"].model_dump(mode="json"),
        "outputs": [{**o["row"], "output": o["output"].model_dump(mode="json") if o["output"] else None,
                     "output_json": None, "metrics": o["metrics"], "judgements": o["judgements"]}
                    for o in detail["outputs"]],
    }


def _print_detail(out, detail: dict) -> None:
    from rich.markup import escape

    sample = detail["sample"]
    out.print(f"[bold]question[/] ({escape(sample.question_id)}): {escape(sample.question)}")
    out.print(f"[bold]reference answers[/]: {escape('; '.join(sample.reference_answers) or '-')}")
    out.print(f"[bold]reference context ids[/]: {escape(', '.join(sample.reference_context_ids) or '-')}")
    for item in detail["outputs"]:
        row, output = item["row"], item["output"]
        out.rule(f"system {escape(row['system'])}: {row['status']}")
        if row["status"] == "failed":
            out.print(f"[red]error[/]: {escape(row['error'] or '')}")
            continue
        for i, (cid, text) in enumerate(zip(output.context_ids, output.contexts), start=1):
            snippet = " ".join(text.split())[:160]
            out.print(f"  [{i}] {escape(cid)}: {escape(snippet)}", highlight=False)
        out.print(f"[bold]answer[/]: {escape(output.answer)}")
        for metric in item["metrics"]:
            value = fmt(metric["value"]) if metric["value"] is not None else f"unscored: {metric['unscored_reason']}"
            out.print(f"  {escape(metric['metric'])}: {escape(value)}")
        for judgement in item["judgements"]:
            out.print(f"  judge {escape(judgement['judge'])}: {judgement['verdict']} "
                      f"({escape(judgement['explanation'] or '')})")


COMMANDS = [show_command]
