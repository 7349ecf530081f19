"""``ragassay meta-eval`` over the read model: the judges' verdicts, the truth, human label files, and the whole
meta-evaluation (:func:`meta_evaluate`: each judge as a detector, and corrected estimates from labels).

Everything is keyed by (system, question_id). A verdict is True (the judge calls the answer correct), False, or
None (no verdict: the judgement is unscored). A judge's verdict is its ``correct``/``incorrect`` verdict, or,
for a judge that only gives a score, score >= the judge threshold. A metric becomes a judge with a threshold:
``NAME:THRESHOLD`` reads value >= THRESHOLD as correct.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

from ..errors import ConfigError
from ..text import describe_json_error
from .meta_eval import DetectorReport, evaluate_detector, ppi_mean

Key = tuple[str, str]  # (system, question_id)
TRUE_LABELS = {"correct", "true", "1", "yes", "1.0"}
FALSE_LABELS = {"incorrect", "false", "0", "no", "0.0"}


@dataclasses.dataclass
class Truth:
    """Ground-truth correctness: where it comes from and its value per (system, question)."""

    source: str  # "judge:match", "contains_answer>=0.5" or "labels:FILE"
    values: dict[Key, bool]
    from_labels: bool = False
    unmatched: int = 0  # label rows that match no output of the run


def parse_metric_spec(text: str) -> tuple[str, float]:
    """``NAME:THRESHOLD`` -> (name, threshold)."""
    name, _, threshold = text.rpartition(":")
    try:
        return (name, float(threshold)) if name else _bad_spec(text)
    except ValueError:
        return _bad_spec(text)


def _bad_spec(text: str):
    raise ConfigError(f"'{text}' is not NAME:THRESHOLD (e.g. k_precision:0.5: a value >= 0.5 counts as correct)")


def judge_verdicts(run, threshold: float) -> dict[str, dict[Key, bool | None]]:
    """judge label -> (system, question_id) -> verdict, for every repeat-0 judgement of ``run``."""
    verdicts: dict[str, dict[Key, bool | None]] = {}
    for s in run.records(kind="judge", repeat=0):
        if s.verdict in ("correct", "incorrect"):
            value: bool | None = s.verdict == "correct"
        else:
            value = None if s.value is None else s.value >= threshold
        verdicts.setdefault(s.label, {})[(s.system, s.question_id)] = value
    return verdicts


def metric_verdicts(run, specs: list[tuple[str, float]]) -> dict[str, dict]:
    """``name>=threshold`` -> (system, question_id) -> value >= threshold (None when unscored)."""
    values: dict[str, dict[Key, float | None]] = {}
    for s in run.records(kind="metric", repeat=0):
        values.setdefault(s.label, {})[(s.system, s.question_id)] = s.value
    out: dict[str, dict[Key, bool | None]] = {}
    for name, threshold in specs:
        if name not in values:
            raise ConfigError(f"run {run.id[:12]} has no metric '{name}'; its metrics: {', '.join(values) or 'none'}")
        out[f"{name}>={threshold:g}"] = {k: None if v is None else v >= threshold for k, v in values[name].items()}
    return out


def truth_from_run(run, spec: str | None, judge_threshold: float) -> Truth:
    """The truth named by ``--truth``: ``judge:NAME`` or ``METRIC:THRESHOLD``; default the run's first judge that
    compares answers with reference answers (``Judge.reference_based``, such as ``match``)."""
    judges = judge_verdicts(run, judge_threshold)
    if spec is None:
        based = [name for name in run.judges if run.judge_traits(name).get("reference_based") and name in judges]
        if not based:
            raise ConfigError(
                f"run {run.id[:12]} has no judge that compares answers with references (such as 'match') to take "
                "as the truth; name one with --truth judge:NAME, --truth METRIC:THRESHOLD or --labels FILE"
            )
        spec = f"judge:{based[0]}"
    if spec.startswith("judge:"):
        name = spec.removeprefix("judge:")
        if name not in judges:
            raise ConfigError(f"run {run.id[:12]} has no judge '{name}'; its judges: {', '.join(judges) or 'none'}")
        raw = judges[name]
    else:
        ((spec, raw),) = metric_verdicts(run, [parse_metric_spec(spec)]).items()
    return Truth(spec, {k: v for k, v in raw.items() if v is not None})


def read_labels(path: Path) -> dict[Key, bool]:
    """Human labels from a JSONL or CSV file: ``question_id``, ``system`` and ``label`` per row.

    ``label`` (or ``correct``) is correct/incorrect, true/false, yes/no or 1/0. A row without them, an unknown
    label, or one (system, question) labelled both ways is a ConfigError naming the file and line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read labels file {path}: {exc.strerror or exc}") from None
    rows = _csv_rows(text) if path.suffix.lower() == ".csv" else _jsonl_rows(text, path)
    labels: dict[Key, bool] = {}
    for line, row in rows:
        key, value = _label(row, path, line)
        if labels.get(key, value) != value:
            raise ConfigError(f"{path}:{line}: {key[0]} / {key[1]} is labelled both correct and incorrect")
        labels[key] = value
    if not labels:
        raise ConfigError(f"labels file {path} has no rows")
    return labels


def _jsonl_rows(text: str, path: Path) -> list[tuple[int, dict]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append((number, json.loads(line)))
            except ValueError as exc:
                raise ConfigError(f"{path}:{number}: {describe_json_error(exc)}") from None
    return rows


def _csv_rows(text: str) -> list[tuple[int, dict]]:
    return [(number, row) for number, row in enumerate(csv.DictReader(io.StringIO(text)), 2)]


def _label(row: object, path: Path, line: int) -> tuple[Key, bool]:
    if not isinstance(row, dict):
        raise ConfigError(f"{path}:{line}: a label row must be an object with question_id, system and label")
    label = row.get("label", row.get("correct"))
    missing = [f for f, v in (("question_id", row.get("question_id")), ("system", row.get("system"))) if not v]
    if missing or label is None:
        raise ConfigError(f"{path}:{line}: missing {', '.join(missing + ([] if label is not None else ['label']))}")
    text = str(label).strip().lower()
    if text not in TRUE_LABELS | FALSE_LABELS:
        raise ConfigError(f"{path}:{line}: label '{label}' is not correct/incorrect, true/false, yes/no or 1/0")
    return (str(row["system"]), str(row["question_id"])), text in TRUE_LABELS


def truth_from_labels(path: Path, known) -> Truth:
    """Human labels joined to the run's outputs ``known`` (their (system, question_id) keys); none matching:
    ConfigError."""
    labels = read_labels(path)
    matched = {k: v for k, v in labels.items() if k in known}
    if not matched:
        example = next(iter(labels))
        raise ConfigError(
            f"no label of {path} matches an output of the run (joined by system and question_id; e.g. "
            f"system '{example[0]}', question '{example[1]}')"
        )
    return Truth(f"labels:{path.name}", matched, from_labels=True, unmatched=len(labels) - len(matched))


@dataclasses.dataclass(frozen=True)
class CorrectedEstimate:
    """One judge and system: the share of correct answers by PPI, next to the judge alone and the labels alone."""

    judge: str
    system: str
    labelled: int
    unlabelled: int
    judge_mean: float | None
    rectifier: float | None
    labels_mean: float | None
    labels_low: float | None
    labels_high: float | None
    ppi_mean: float | None
    ppi_low: float | None
    ppi_high: float | None
    ppi_clipped_from: float | None = None  # the PPI estimate before it was moved into [0, 1] (None: not moved)


@dataclasses.dataclass(frozen=True)
class MetaEvaluation:
    """How far each judge of a run can be trusted against the truth, and the corrected estimates (labels only)."""

    run_id: str
    truth: Truth
    detectors: list[DetectorReport]
    corrected: list[CorrectedEstimate]


def meta_evaluate(
    run,
    *,
    truth: str | None = None,
    labels: Path | None = None,
    judges: tuple[str, ...] = (),
    metrics: list[tuple[str, float]] = (),
    judge_threshold: float = 0.5,
    resamples: int = 2000,
    seed: int = 0,
) -> MetaEvaluation:
    """Every judge of ``run`` (or ``judges``), and each metric of ``metrics`` read as a judge, against the truth
    (``truth``: ``judge:NAME`` or ``METRIC:THRESHOLD``; or human ``labels``)."""
    verdicts = judge_verdicts(run, judge_threshold)
    if labels is not None:
        gold = truth_from_labels(labels, set(run.outputs))
    else:
        gold = truth_from_run(run, truth, judge_threshold)
    candidates = _pick_judges(verdicts, judges, gold.source, run.id)
    candidates.update(metric_verdicts(run, list(metrics)))
    if not candidates:
        raise ConfigError(
            f"run {run.id[:12]} has no judge to evaluate besides the truth ({gold.source}); "
            "add a metric with --metric NAME:THRESHOLD"
        )
    keys = sorted(gold.values)
    detectors = [
        evaluate_detector(
            name, [gold.values[k] for k in keys], [judged.get(k) for k in keys], resamples=resamples, seed=seed
        )
        for name, judged in candidates.items()
    ]
    corrected = _corrected(gold.values, candidates, run.systems) if gold.from_labels else []
    return MetaEvaluation(run.id, gold, detectors, corrected)


def _pick_judges(verdicts: dict, wanted: tuple[str, ...], truth: str, run_id: str) -> dict:
    for name in wanted:
        if name not in verdicts:
            raise ConfigError(f"run {run_id[:12]} has no judge '{name}'; its judges: {', '.join(verdicts) or 'none'}")
    names = wanted or [name for name in verdicts if f"judge:{name}" != truth]
    return {name: verdicts[name] for name in names}


def _corrected(truth: dict, candidates: dict, systems: list[str]) -> list[CorrectedEstimate]:
    """PPI per judge and system: the judge's 0/1 verdicts on unlabelled outputs, corrected on labelled ones."""
    rows = []
    for name, judged in candidates.items():
        for system in systems:
            mine = sorted((k, float(v)) for k, v in judged.items() if k[0] == system and v is not None)
            labelled = [(v, float(truth[k])) for k, v in mine if k in truth]
            unlabelled = [v for k, v in mine if k not in truth]
            est = ppi_mean(unlabelled, [v for v, _ in labelled], [y for _, y in labelled], rate=True)
            labels_low, labels_high = est.classical_ci or (None, None)
            ppi_low, ppi_high = est.ci or (None, None)
            rows.append(
                CorrectedEstimate(
                    name,
                    system,
                    est.labelled,
                    est.unlabelled,
                    est.judge_mean,
                    est.rectifier,
                    est.classical,
                    labels_low,
                    labels_high,
                    est.estimate,
                    ppi_low,
                    ppi_high,
                    est.clipped_from,
                )
            )
    return rows
