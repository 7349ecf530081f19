"""``--labelled METRIC=RUBRIC`` and ``--labels FILE`` of ``compare``, ``gate`` and ``plan``: the options, the
labels they read, and the prediction-powered verdicts as tables (:mod:`ragassay.analysis.ppi_verdicts`)."""

from __future__ import annotations

from pathlib import Path

import click

from .file_params import FilePath
from .render import Column, Table, number_text

LABELLED_HELP = (
    "Decide METRIC on prediction-powered estimates from people's labels of RUBRIC (binary, ordinal or pairwise): "
    "the metric on every sample, corrected by the labelled ones; repeat for several metrics "
    "(docs/statistics.md, When the judge errs)."
)
LABELS_HELP = (
    "The people's labels for --labelled: a labels export (JSONL, ragassay labels export). Default: the labels "
    "stored (ragassay label, labels import) that count on each run: its own, and other runs' labels of the same "
    "answers; a label whose answer changed is stale, never used."
)


def labelled_options(command):
    """``--labelled METRIC=RUBRIC`` (repeatable) and ``--labels FILE``."""
    command = click.option(
        "--labels",
        "labels_path",
        type=FilePath("a labels export (JSONL), e.g. {folder}/labels.jsonl"),
        default=None,
        help=LABELS_HELP,
    )(command)
    return click.option("--labelled", "labelled", multiple=True, metavar="METRIC=RUBRIC", help=LABELLED_HELP)(command)


def labelled_specs(specs, config: dict | None = None):
    """The :class:`ragassay.analysis.ppi_labels.Labelled` of ``--labelled``, else of the stored config's
    ``[evaluation] labelled``."""
    from ..analysis.ppi_labels import labelled_of, parse_labelled

    if specs:
        return parse_labelled(specs)
    return labelled_of(((config or {}).get("evaluation") or {}).get("labelled"))


def people_labels(sides, labelled, labels_path: Path | None) -> tuple[list, object]:
    """(labels, :class:`ragassay.results.PeopleLabels`) of the ``labelled`` metrics' rubrics on each run of
    ``sides`` ((store, run read with payloads) pairs): the labels that count there
    (:func:`ragassay.labels.reuse.reusable_labels`: the same answer, even labelled on another run; a changed answer
    is stale), from the labels export ``labels_path``, else from the stores. A rubric with no label used on any run
    but some left out (stale, without a digest) is a ConfigError that says why."""
    from ..analysis.human_labels import read_label_export, stored_labels
    from ..errors import ConfigError
    from ..results import read_people

    given = None
    if labels_path is not None:
        given = [label.as_label() for label in read_label_export(labels_path)]
    source = f"labels file {labels_path.name}" if labels_path is not None else "the labels in the results store"
    people = read_people(sides, [x.rubric for x in labelled], given, source)
    for entry in labelled:
        runs = [r for r in people.runs if r.rubric == entry.rubric]
        if not any(r.reuse.labels or r.reuse.stale or r.reuse.undigested or r.reuse.unmatched for r in runs):
            known = ", ".join(_rubrics(sides, given)) or "- (no labels: label outputs with ragassay label)"
            raise ConfigError(
                f"--labelled {entry.metric}={entry.rubric}: no label of rubric {entry.rubric} in {source}. "
                f"Its rubrics: {known}"
            )
        if not any(r.reuse.labels for r in runs):
            why = "; ".join(f"{r.line()} ({r.reuse.unmatched} about answers the run does not have)" for r in runs)
            raise ConfigError(
                f"--labelled {entry.metric}={entry.rubric}: no label of {entry.rubric} in {source} counts on the "
                f"run(s): {why}. Label the new answers (ragassay label), or give labels of these runs."
            )
    return stored_labels(people.labels), people


def _rubrics(sides, given) -> list[str]:
    """The rubrics of the labels at hand: the file's, else the stores' labels of the runs' samples."""
    if given is not None:
        return sorted({label.rubric for label in given})
    found = set()
    for store, run in sides:
        if hasattr(store, "labels_of_samples"):
            found |= {label.rubric for label in store.labels_of_samples(run.question_ids, None)}
    return sorted(found)


def reuse_lines(people) -> list[str]:
    """What counted of people's labels, one line per run and rubric (used, reused from other runs, stale)."""
    return [] if people is None else people.lines()


def _interval(low_key: str, high_key: str, mean_key: str, sign: str = "+"):
    def show(row: dict) -> str:
        if row.get(mean_key) is None:
            return "-"
        return f"{row[mean_key]:{sign}.3f} [{row[low_key]:{sign}.3f}, {row[high_key]:{sign}.3f}]"

    return show


def _labels_cell(row: dict) -> str:
    if row["kind"] == "pairwise":
        return f"{row['labelled']} pairs"
    return f"{row['labels_baseline']}/{row['labels_system']} ({row['labelled']} both)"


NAMES = ("run", "metric", "rubric", "kind", "baseline", "system", "verdict", "reason")
PAIR_KEYS = (
    "run", "metric", "rubric", "kind", "baseline", "system", "n", "labelled", "labels_baseline", "labels_system",
    "estimate", "low", "high", "std_error", "null", "p_value", "p_holm", "level", "lam", "judge_mean", "judge_low",
    "judge_high", "labels_mean", "labels_low", "labels_high", "verdict", "reason",
)  # fmt: skip


def ppi_pairs_table(runs: list, *, gate: bool = False, people=None) -> Table:
    """Every prediction-powered comparison of ``runs`` (:class:`ragassay.analysis.ppi_verdicts.PPIVerdicts`, or
    the gate's pairs as one list when ``gate``): estimate and interval, labels used, lambda, judge-only; with
    ``people`` (:class:`ragassay.results.PeopleLabels`) the labels used, reused and stale on the system's run."""
    text = {"metric", "system", "verdict"}
    columns = [Column(key, numeric=key not in NAMES, in_text=key in text) for key in PAIR_KEYS]
    columns[PAIR_KEYS.index("estimate")] = Column("estimate", numeric=True, in_text=False)
    at = PAIR_KEYS.index("lam")
    columns[at:at] = [
        Column("labels", header="labels base/sys", show=_labels_cell, in_data=False),
        Column("ppi", header="PPI diff [CI]", show=_interval("low", "high", "estimate"), in_data=False),
        Column("lambda", numeric=True, show=lambda r: number_text(r["lam"], 2), in_data=False),
    ]
    columns.insert(
        -2,
        Column(
            "judge", header="judge only [CI]", show=_interval("judge_low", "judge_high", "judge_mean"), in_data=False
        ),
    )
    pairs = runs if gate else [(v.run_id, p) for v in runs for p in v.pairs]
    rows = [{"run": run_id, **{k: getattr(p, k) for k in PAIR_KEYS if k != "run"}} for run_id, p in pairs]
    if people is not None:
        columns += [Column(k, numeric=True, in_text=False) for k in REUSE_KEYS]
        rows = [row | people.counts(row["run"], row["rubric"]) for row in rows]
    from ..analysis.ppi_verdicts import few_labels_notes

    found = [p for _, p in pairs]
    warnings = dict.fromkeys(f"warning: {n}" for v in ([] if gate else runs) for n in v.notes)
    warnings |= dict.fromkeys(f"warning: {n}" for n in few_labels_notes(found))
    notes = [*_legend(gate), *reuse_lines(people), *warnings]
    return Table("prediction-powered verdicts (people's labels)", columns, rows, notes, id_columns=("metric", "system"))


REUSE_KEYS = ("labels_used", "labels_reused", "labels_stale", "labels_undigested")


def _legend(gate: bool) -> list[str]:
    side = "the same system in the baseline run" if gate else "the baseline"
    return [
        f"PPI diff: the mean label of the system minus {side}, estimated from the labelled samples and corrected by "
        "the metric on every paired sample (PPI++, tuned lambda; 0: the labels alone, 1: plain PPI); interval at the "
        "comparison's Holm level. labels base/sys: labelled answers of each side (both: samples where both are).",
        "judge only: what the metric alone says (on the rubric's scale), as if it were right, at the same level.",
    ]


def ppi_systems_table(runs: list) -> Table:
    """Each system's prediction-powered mean label (binary and ordinal rubrics)."""
    keys = ("run", "metric", "rubric", "system", "labelled", "unlabelled", "estimate", "low", "high", "lam")
    keys += ("judge_mean", "judge_low", "judge_high", "reason")
    text = {"metric", "system", "labelled"}
    columns = [
        Column(k, numeric=k not in ("run", "metric", "rubric", "system", "reason"), in_text=k in text) for k in keys
    ]
    columns.insert(
        7, Column("ppi", header="PPI mean [95% CI]", show=_interval("low", "high", "estimate", ""), in_data=False)
    )
    columns.insert(
        -3,
        Column(
            "judge",
            header="judge only [95% CI]",
            show=_interval("judge_low", "judge_high", "judge_mean", ""),
            in_data=False,
        ),
    )
    rows = [{"run": v.run_id, **{k: getattr(s, k) for k in keys if k != "run"}} for v in runs for s in v.systems]
    return Table(
        "prediction-powered means per system (people's labels)", columns, rows, id_columns=("metric", "system")
    )


def ppi_lines(verdicts) -> list[str]:
    """The prediction-powered verdict block of one run in words."""
    from ..analysis.sentences import confidence
    from ..text import counted

    head = (
        f"prediction-powered verdicts, run {verdicts.run_id[:8]}: against {verdicts.baseline} (baseline), alpha "
        f"{verdicts.alpha:g}, Holm over {counted(len(verdicts.pairs), 'comparison')} on "
        f"{', '.join(verdicts.family)}, labels from {verdicts.source} (they decide; the other columns are "
        "described, not decided)"
    )
    lines = [head]
    for p in verdicts.pairs:
        if p.estimate is None:
            lines.append(f"  {p.system} vs {p.baseline} on {p.metric} ({p.rubric}): {p.reason}.")
            continue
        lines.append(
            f"  {p.system} vs {p.baseline} on {p.metric} ({p.rubric}): {p.verdict}, {p.estimate:+.3f} "
            f"({confidence(p.level)} CI {p.low:+.3f} to {p.high:+.3f}, Holm p {p.p_holm:.3g}; {p.labelled} labelled "
            f"of {p.n} samples, lambda {p.lam:.2f}); the judge alone: {p.judge_mean:+.3f} ({p.judge_low:+.3f} to "
            f"{p.judge_high:+.3f})."
        )
    return lines
