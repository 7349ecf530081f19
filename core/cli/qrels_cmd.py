"""``ragassay qrels judge/eval``: relevance labels without gold (docs/retrieval.md, "Without gold labels").

``judge`` pools a run's top-k retrieved passages over its systems, grades each new (query, passage) pair with a
relevance judge (umbrela: UMBRELA's 0-3 prompt) and writes TREC qrels; ``eval`` scores the run's rankings with
trec_eval's measures under those qrels and, with people's qrels of part of the queries, gives prediction-powered
intervals, paired verdicts and the Kendall tau of the two system rankings (:mod:`ragassay.analysis.relevance_eval`).
"""

from __future__ import annotations

from pathlib import Path

import click

from .common import config_option, console, db_option, format_option, output_format, read_runs
from .file_params import FilePath
from .help_text import ListsWholeSentences
from .render import Column, Table, emit, esc

DEFAULT_METRICS = ("ndcg_at_k@10", "ir_precision_at_k@5", "ir_recall_at_k@10")


@click.group("qrels", cls=ListsWholeSentences)
def qrels_group() -> None:
    """Relevance labels without gold: judge a run's pooled top-k, evaluate on them (docs/retrieval.md)."""


@qrels_group.command("judge")
@click.argument("run")
@config_option
@db_option
@click.option(
    "--judge",
    "judge_text",
    required=True,
    help="The relevance judge: a judge key of [evaluation] judges, or a TOML inline table such as "
    '\'{ name = "umbrela", options = { generator = "openai" } }\'.',
)
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Pool depth k per system.")
@click.option("--system", "systems", multiple=True, help="Pool only these systems (repeatable; default: all).")
@click.option("--out", required=True, type=FilePath("the TREC qrels file to write, e.g. {folder}/judged.qrels"))
@click.option(
    "--cache",
    "cache_path",
    type=FilePath("a JSONL file of relevance labels, e.g. {folder}/relevance-labels.jsonl"),
    default=None,
    help="The label cache (default: relevance-labels.jsonl in the project's cache_dir).",
)
@format_option
def judge_command(run, config_path, db, judge_text, depth, systems, out, cache_path, fmt):
    """Grade the pooled top-k passages of RUN with a relevance judge and write TREC qrels to --out."""
    from ..analysis.relevance_pool import LabelCache, judge_pool, pool_run
    from ..engine.project import Project
    from ..labels.qrels import write_qrels

    fmt = output_format(fmt)
    project = Project.load(config_path)
    judge = project.context.build("judge", judge_ref(project, judge_text))
    data = _read_run(config_path, db, run)
    cache = LabelCache(cache_path or project.cache_dir / "relevance-labels.jsonl")
    result = judge_pool(judge, pool_run(data, depth, systems or None), cache, project.config.project.concurrency)
    lines = write_qrels(result.qrels, out)
    rows = [
        {"what": "pooled pairs", "count": result.pooled},
        {"what": "from the label cache", "count": result.reused},
        {"what": "judged now", "count": result.judged},
        {"what": "not gradable", "count": len(result.unusable)},
    ]
    notes = [
        f"judge {esc(result.judge)}; depth {result.depth}; systems {esc(', '.join(result.systems))}",
        f"wrote {lines} judgements to {esc(out)}; labels cached in {esc(result.cache)}",
    ]
    notes += [f"{esc(q)} / {esc(d)}: {esc(reason)}" for q, d, reason in result.unusable[:5]]
    if result.text_conflicts:
        notes.append(f"{result.text_conflicts} ids came with different texts from different systems: the first judged")
    table = Table(
        f"relevance labels of run {data.id[:12]}", [Column("what"), Column("count", numeric=True)], rows, notes
    )
    from ..analysis.jsonable import jsonable

    emit(console(), [table], fmt, data={**jsonable(result), "out": str(out)} if fmt == "json" else None)


@qrels_group.command("eval")
@click.argument("run")
@config_option
@db_option
@click.option("--qrels", "judged_path", required=True, type=FilePath("a TREC qrels file", exists=True),
              help="The judged qrels (as 'qrels judge' writes them).")  # fmt: skip
@click.option("--human", "human_path", required=True, type=FilePath("a TREC or BEIR qrels file", exists=True),
              help="People's qrels of a random part of the queries.")  # fmt: skip
@click.option("--metric", "metric_texts", multiple=True, help="NAME@K of an IR metric (repeatable; default: "
              + ", ".join(DEFAULT_METRICS) + ").")  # fmt: skip
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap of Kendall's tau.")
@click.option("--resamples", type=click.IntRange(min=100), default=2000, show_default=True)
@format_option
def eval_command(run, config_path, db, judged_path, human_path, metric_texts, confidence, seed, resamples, fmt):
    """Score RUN's rankings under the judged qrels, corrected by people's qrels: PPI intervals, verdicts, tau."""
    from ..analysis.jsonable import jsonable
    from ..analysis.relevance_eval import decide_relevance
    from ..engine.project import Project
    from ..labels.qrels import read_qrels

    fmt = output_format(fmt)
    project = Project.load(config_path)
    metrics = {text: project.context.build("metric", metric_ref(text)) for text in metric_texts or DEFAULT_METRICS}
    data = _read_run(config_path, db, run)
    report = decide_relevance(
        data, metrics, read_qrels(judged_path), read_qrels(human_path),
        confidence=confidence, seed=seed, resamples=resamples,
    )  # fmt: skip
    tables = [table for decision in report.metrics for table in _decision_tables(report, decision)]
    emit(console(), tables, fmt, data=jsonable(report) if fmt == "json" else None)


def judge_ref(project, text: str) -> dict:
    """The judge reference of ``--judge``: a TOML inline table, a judge key of [evaluation] judges, or a name."""
    from ..config import tomllib
    from ..errors import ConfigError

    if text.strip().startswith("{"):
        try:
            ref = tomllib.loads(f"judge = {text}")["judge"]
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"--judge is not a TOML inline table: {exc}; e.g. '{{ name = \"umbrela\" }}'") from None
        return ref
    for ref in project.config.evaluation.judges:
        if ref.key == text:
            return {"name": ref.name, "options": ref.options}
    return {"name": text}


def metric_ref(text: str) -> dict:
    """``NAME@K`` (or ``NAME``) as a metric reference with option k."""
    from ..errors import ConfigError

    name, _, k = text.partition("@")
    if k and not k.isdigit():
        raise ConfigError(f"--metric {text!r}: the cut-off after @ must be a positive integer, e.g. ndcg_at_k@10")
    return {"name": name, "options": {"k": int(k)} if k else {}}


def _read_run(config_path: Path, db, ref: str):
    from .common import open_results

    store = open_results(config_path, db, (ref,))
    try:
        return read_runs(store, [ref], payloads=True)[0]
    finally:
        store.close()


def _decision_tables(report, decision) -> list[Table]:
    pct = f"{report.confidence:.0%}"
    rows = []
    for system, r in decision.systems.items():
        rows.append({
            "system": system, "ppi": r.estimate, "low": r.low, "high": r.high, "judge_only": r.judge_only.mean,
            "labels_only": None if r.labels_only is None else r.labels_only.mean, "lambda": r.lam,
        })  # fmt: skip
    columns = [
        Column("system"), Column("ppi", numeric=True), Column("low", numeric=True), Column("high", numeric=True),
        Column("judge_only", "judge only", numeric=True), Column("labels_only", "labels only", numeric=True),
        Column("lambda", numeric=True, digits=2),
    ]  # fmt: skip
    fid = decision.fidelity
    span = "-" if fid.low is None else f"[{fid.low:+.2f}, {fid.high:+.2f}]"
    tau = "-" if fid.tau is None else f"{fid.tau:+.2f}"
    notes = [
        f"{len(report.labelled)} queries with people's qrels, {len(report.unlabelled)} judged only; {pct} intervals",
        f"Kendall tau (judged vs people's ranking, labelled queries) {tau}, {pct} bootstrap {span} "
        f"({fid.resamples} resamples, seed {report.seed}; {fid.dropped} all-tie resamples dropped)",
        f"judged order: {esc(' > '.join(fid.judge_order))}; people's: {esc(' > '.join(fid.human_order))}",
        *map(esc, decision.notes + report.notes),
    ]
    pairs = [
        {"a": p.a, "b": p.b, "diff": p.result.estimate, "low": p.result.low, "high": p.result.high,
         "p": p.result.p_value, "verdict": p.verdict}
        for p in decision.pairs
    ]  # fmt: skip
    pair_columns = [Column("a"), Column("b"), Column("diff", "a - b", numeric=True), Column("low", numeric=True),
                    Column("high", numeric=True), Column("p", numeric=True), Column("verdict")]  # fmt: skip
    return [
        Table(f"{esc(decision.metric)}: prediction-powered means", columns, rows, notes),
        Table(
            f"{esc(decision.metric)}: paired verdicts",
            pair_columns,
            pairs,
            [
                f"Holm over the {len(pairs)} pairs (family-wise {1 - report.confidence:g}): each interval at its "
                "pair's Holm level, a verdict only where it excludes 0; p: unadjusted"
            ],
            id_columns=("a", "b"),
        ),
    ]


COMMANDS = [qrels_group]
