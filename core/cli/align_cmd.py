"""``ragassay align JUDGE``: a variant of a judge whose prompt carries K labelled exemplars, its change in
agreement with people on a held-out split (ragassay.analysis.align), and the variant as a config snippet."""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format
from .file_params import FilePath
from .render import Column, Table, emit


@click.command("align")
@click.argument("judge")
@config_option
@db_option
@click.option("--run", "run_ref", default=None, help="The run whose outputs are judged (default: the labels' run).")
@click.option(
    "--labels",
    type=FilePath("a JSONL file of labels, as 'ragassay labels export' writes it", exists=True),
    default=None,
    help="People's labels: a labels export (JSONL); default: the labels stored for the run.",
)
@click.option(
    "--rubric",
    default="correct",
    show_default=True,
    help="The binary rubric whose labels count (ordinal and pairwise rubrics are refused: docs/labelling.md).",
)
@click.option("--examples", "k", type=click.IntRange(min=1), required=True, help="Exemplars in the variant's prompt.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the split and of the choice.")
@click.option(
    "--rule",
    type=click.Choice(["stratified", "nearest", "random"]),  # ragassay.analysis.align.RULES
    default="stratified",
    show_default=True,
    help="How exemplars are chosen from the pool (docs/labelling.md).",
)
@click.option(
    "--pool-share",
    type=float,
    default=0.5,
    show_default=True,
    help="Share of the labelled questions in the exemplar pool; the rest is held out.",
)
@click.option("--embedder", default=None, help="The embedder of the nearest rule (a registered embedder name).")
@click.option(
    "--out",
    type=FilePath("the TOML file to write, e.g. {folder}/aligned.toml"),
    default=None,
    help="Where the variant's config snippet goes (default: JUDGE-aligned.toml beside the config).",
)
@format_option
def align_command(judge, config_path, db, run_ref, labels, rubric, k, seed, rule, pool_share, embedder, out, fmt):
    """Align JUDGE to people's labels with K exemplars; report the held-out change; write the variant."""
    from ..analysis.align_run import align_judge
    from ..analysis.jsonable import jsonable
    from ..engine.project import Project

    fmt = output_format(fmt)
    project = Project.load(config_path)
    run, people = _run_and_labels(config_path, db, run_ref, labels)
    result = align_judge(
        project,
        run,
        people,
        judge,
        examples=k,
        rule=rule,
        seed=seed,
        pool_share=pool_share,
        rubric=rubric,
        embedder=embedder,
    )
    path = out or project.base_dir / f"{judge}-aligned.toml"
    path.write_text(snippet(result), encoding="utf-8")
    data = {**jsonable(result), "snippet": str(path)}
    emit(console(), [_table(result, path)], fmt, data=data if fmt == "json" else None)


def _run_and_labels(config_path, db, run_ref, labels):
    from ..analysis.human_labels import read_label_export, stored_labels
    from ..errors import ConfigError
    from ..results import read_labels
    from ..store.locate import pick_run
    from .common import open_results, read_runs

    people = read_label_export(labels) if labels else []
    if run_ref is None and people:
        runs = sorted({label.run_id for label in people})
        if len(runs) > 1:
            raise ConfigError(f"the labels are for {len(runs)} runs; name one with --run")
        run_ref = runs[0]
    store = open_results(config_path, db, (run_ref,) if run_ref else ())
    try:
        run = read_runs(store, [run_ref or pick_run(store)["id"]], payloads=True)[0]
        people = people or stored_labels(read_labels(store, run.id))
    finally:
        store.close()
    if not people:
        raise ConfigError(f"run {run.id[:12]} has no stored labels; label it (ragassay label) or give --labels FILE")
    return run, people


def snippet(result) -> str:
    """The variant as a TOML config snippet with its provenance."""
    import tomli_w

    change = result.change
    head = [
        f"# {result.variant_ref['label']}: judge '{result.judge}' with {len(result.exemplar_items)} exemplars",
        f"# chosen by ragassay align (rule {result.rule}, seed {result.seed}) from run {result.run_id[:12]};",
        f"# held-out agreement {_share(change.original.accuracy)} -> {_share(change.variant.accuracy)} "
        f"on {change.paired} items. Add this judge to [evaluation] judges.",
    ]
    return "\n".join(head) + "\n" + tomli_w.dumps({"evaluation": {"judges": [result.variant_ref]}})


def _share(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def _table(result, path: Path) -> Table:
    c = result.change
    interval = "-" if c.low is None else f"[{c.low:+.3f}, {c.high:+.3f}]"
    rows = [
        {
            "judge": result.judge,
            "agreement": _share(c.original.accuracy),
            "judged": c.original.judged,
            "unscored": c.original.unscored,
        },
        {
            "judge": result.variant_ref["label"],
            "agreement": _share(c.variant.accuracy),
            "judged": c.variant.judged,
            "unscored": c.variant.unscored,
        },
    ]
    change = "-" if c.change is None else f"{c.change:+.3f}"
    notes = [
        f"held-out split: {len(result.split.test)} questions ({c.original.judged + c.original.unscored} labelled "
        f"outputs); exemplars: {len(result.exemplar_items)} from a pool of {len(result.split.pool)} questions, "
        f"rule {result.rule}, seed {result.seed}; agreement on the exemplars is never reported",
        f"change (variant - original) {change} on {c.paired} paired items, 95% interval {interval} (paired "
        f"sign-flip), {'a change' if c.significant else 'no detectable change'}",
        f"variant prompt_version {result.prompt_version}; config snippet written to {path}",
    ]
    if result.ties:
        notes.append(f"{result.ties} items with tied labels are left out")
    columns = [
        Column("judge"),
        Column("agreement", numeric=True),
        Column("judged", numeric=True),
        Column("unscored", numeric=True),
    ]
    return Table("agreement with people on the held-out split", columns, rows, notes=notes)


COMMANDS = [align_command]
