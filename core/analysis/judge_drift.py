"""A judge whose identity changed, re-checked on its calibration items before it decides anything.

A judge's identity (:attr:`ragassay.llm.LLMJudging.identity`: component, generator, prompt version and a digest of
the model's options, the decoding parameters and the prompt) is stored with every judgement. The *calibration
items* of a judge are the items people labelled in the run where it was calibrated. When the configured judge's
identity differs from the one that judged those items, ``ragassay judges check`` re-judges exactly those items
with the new judge (a run of its own, through the runner: stored, cached, resumable) and this module compares the
two judges' agreement with people on the same items:

- the agreement statistic and items are those of :mod:`.judge_choice` (binary rubrics: Cohen's kappa of the
  verdict against the majority label; ordinal: quadratic-weighted kappa or Spearman's rho, the labels of one item
  resampled together), only items both judges scored on the *same* output text;
- the **change** is the new judge's agreement minus the old one's, with the paired bootstrap interval (both
  computed on each resample of the same items, two-sided at ``confidence``);
- the outcome at margin ``m``: **dropped** when the interval's upper bound is below ``-m`` (the drop exceeds the
  margin, at the one-sided level (1 - confidence) / 2); **may have dropped** when the interval contains ``-m``
  (or the change is undefined); **held** when its lower bound is at or above ``-m``.

What a check decided is stored with its run (``spec["judge_check"]``, :func:`check_record`), and
:func:`calibration_warnings` turns the stored checks and the labelled items into the one-line warnings that
``compare`` and ``gate`` print for a deciding judge that has no calibration items or whose last check flagged
a drop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from ..errors import ConfigError
from .agreement import Estimate
from .human_labels import HumanLabel, Rubric, latest
from .judge_choice import agreement_of, identities_of, observations, paired_difference, statistic_for

HELD, DROPPED, MAYBE, UNCHANGED = "held", "dropped", "may have dropped", "unchanged"
#: The exit code of ``ragassay judges check`` for each outcome (2: an error).
EXIT_CODES = {UNCHANGED: 0, HELD: 0, DROPPED: 1, MAYBE: 3}


@dataclasses.dataclass(frozen=True)
class JudgeCheck:
    """A judge's agreement with people on its calibration items, before and after its identity changed."""

    run_id: str  # the run where people labelled the calibration items
    judge: str  # the judge's label
    identity: str  # the configured (new) identity
    before: tuple[str, ...]  # the identities that judged the calibration items
    outcome: str  # held | dropped | may have dropped | unchanged
    rubric: str
    statistic: str = ""
    margin: float = 0.0
    confidence: float = 0.95
    items: int = 0
    calibration_run: str | None = None  # the run holding the new judge's judgements
    agreement_before: Estimate | None = None
    agreement_after: Estimate | None = None
    change: Estimate | None = None  # after minus before, paired bootstrap
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


def calibration_items(run, labels: list[HumanLabel], rubric: Rubric) -> list[HumanLabel]:
    """The latest labels of ``rubric`` given on ``run``'s outputs (one system's answer each); ConfigError if none."""
    if rubric.kind == "pairwise":
        raise ConfigError(f"rubric '{rubric.name}' is pairwise: judges check reads binary and ordinal rubrics")
    mine = [x for x in latest(labels) if x.run_id == run.id and x.rubric == rubric.name and x.system is not None]
    if not mine:
        raise ConfigError(
            f"no item of run {run.id[:12]} is labelled on rubric '{rubric.name}': a judge is calibrated on labelled "
            f"items (ragassay label {run.id[:12]} --rubric {rubric.name}, or give --labels FILE)"
        )
    return mine


def judged_before(run, judge: str) -> tuple[str, ...]:
    """The identities that judged ``run``'s outputs as judge ``judge`` (ConfigError if it has no such judge)."""
    if not run.records(kind="judge", label=judge, repeat=0):
        raise ConfigError(f"run {run.id[:12]} has no judge '{judge}'; its judges: {', '.join(run.judges) or 'none'}")
    return identities_of(run, judge)


def unchanged(run, judge: str, identity: str, rubric: Rubric) -> JudgeCheck:
    """The check when the configured identity is the one that judged the calibration items: nothing to re-judge."""
    return JudgeCheck(run.id, judge, identity, (identity,), UNCHANGED, rubric.name)


def check_judge(
    run,
    rejudged,
    labels: list[HumanLabel],
    rubric: Rubric,
    judge: str,
    identity: str,
    *,
    answers: tuple[Mapping, Mapping] | None = None,
    margin: float = 0.05,
    statistic: str | None = None,
    judge_threshold: float = 0.5,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> JudgeCheck:
    """Agreement with people of judge ``judge`` in ``run`` (the old identity) and in ``rejudged`` (the run of the
    calibration items judged by the new ``identity``), on the labelled items both scored; ``answers``: each
    run's (system, question_id) -> answer text, so that an item whose output changed is left out."""
    statistic = statistic_for(rubric, statistic)
    mine = calibration_items(run, labels, rubric)
    notes: list[str] = []
    if answers is not None:
        mine = _same_outputs(mine, answers, notes)
    scores = {"before": _pairs(run, judge), "after": _pairs(rejudged, judge)}
    observed = observations(rubric, mine, scores, judge_threshold, notes)
    boot = {"resamples": resamples, "seed": seed, "confidence": confidence}
    before, after = ((rubric, statistic, observed.judged[k]) for k in ("before", "after"))
    change = paired_difference(after, before, observed, boot)
    return JudgeCheck(
        run.id,
        judge,
        identity,
        judged_before(run, judge),
        outcome(change, margin),
        rubric.name,
        statistic,
        margin,
        confidence,
        observed.items,
        rejudged.id,
        agreement_of(before, observed, boot),
        agreement_of(after, observed, boot),
        change,
        notes,
    )


def outcome(change: Estimate, margin: float) -> str:
    """dropped (upper bound below -margin), held (lower bound at or above -margin), else may have dropped."""
    if change.value is None or change.low is None or change.high is None:
        return MAYBE
    if change.high < -margin:
        return DROPPED
    return HELD if change.low >= -margin else MAYBE


def _pairs(run, judge: str) -> dict:
    return {(s.system, s.question_id): (s.value, s.verdict) for s in run.records(kind="judge", label=judge, repeat=0)}


def _same_outputs(labels: list[HumanLabel], answers: tuple[Mapping, Mapping], notes: list) -> list[HumanLabel]:
    old, new = answers
    kept = [x for x in labels if x.item in new and old.get(x.item) == new[x.item]]
    changed = {x.item for x in labels} - {x.item for x in kept}
    if changed:
        notes.append(f"{len(changed)} labelled items left out: their output in the re-judged run is another text")
    if not kept:
        raise ConfigError("no labelled output was re-judged as it was labelled: the systems' outputs changed")
    return kept


def check_record(check: JudgeCheck, checked_at: float) -> dict:
    """What a check stores with its run (``spec["judge_check"]``): enough for :func:`calibration_warnings`."""
    change = check.change or Estimate(None, None, None, 0)
    return {
        "judge": check.judge,
        "identity": check.identity,
        "before": list(check.before),
        "run_id": check.run_id,
        "rubric": check.rubric,
        "statistic": check.statistic,
        "items": check.items,
        "margin": check.margin,
        "outcome": check.outcome,
        "change": {"value": change.value, "low": change.low, "high": change.high},
        "checked_at": checked_at,
    }


def deciding_identities(run, columns: Iterable[str]) -> dict[str, set[str]]:
    """judge identity -> the deciding columns of ``run`` it scored (``judge:LABEL``, or a metric whose values
    carry a ``judge`` detail); only model judges (that made a model call, or had one served from the cache): a
    rule such as ``match`` has nothing to calibrate."""
    found: dict[str, set[str]] = {}
    for column in columns:
        kind, label = ("judge", column[6:]) if column.startswith("judge:") else ("metric", column)
        for record in run.records(kind=kind, label=label, repeat=0):
            ident = record.judge_id or (record.details.get("judge") if record.details_json else None)
            if ident and record.usage.calls + record.usage.cache_hits > 0:
                found.setdefault(str(ident), set()).add(column)
    return found


def calibration_warnings(deciding: Mapping[str, set[str]], checks: list[dict], calibrated: set[str]) -> list[str]:
    """One line per deciding judge identity that has no calibration items (neither judged a labelled item nor
    re-judged one in a check) or whose latest check (``checks``: stored records) flagged a drop."""
    latest_check: dict[str, dict] = {}
    for record in sorted(checks, key=lambda r: r.get("checked_at") or 0.0):
        latest_check[record["identity"]] = record
    lines = []
    for ident in sorted(deciding):
        columns = ", ".join(sorted(deciding[ident]))
        record = latest_check.get(ident)
        if record is not None and record["outcome"] in (DROPPED, MAYBE):
            c = record["change"]
            lines.append(
                f"warning: judge {ident} ({columns}) {record['outcome']} in agreement with people at its last check "
                f"({record['statistic']} change {_signed(c['value'])} [{_signed(c['low'])}, {_signed(c['high'])}], "
                f"{record['items']} items of run {record['run_id'][:12]}; ragassay judges check shows it)"
            )
        elif record is None and ident not in calibrated:
            lines.append(
                f"warning: judge {ident} ({columns}) has no calibration items: no labelled output was judged by it "
                "(label some outputs, or ragassay judges check RUN --judge LABEL on a labelled run)"
            )
    return lines


def _signed(value) -> str:
    return "?" if value is None else f"{value:+.3f}"


def decision_warnings(runs, families, calibration) -> list[str]:
    """:func:`calibration_warnings` for the judges that decide in ``runs`` (``families``: each run's deciding
    columns, side by side), from the store's ``calibration`` (:class:`ragassay.results.calibration.Calibration`,
    or a function that reads it: called only when a model judge decides, so a comparison without one reads
    nothing more from the store)."""
    deciding: dict[str, set[str]] = {}
    for run, family in zip(runs, families):
        for ident, columns in deciding_identities(run, family).items():
            deciding.setdefault(ident, set()).update(columns)
    if not deciding:
        return []
    if callable(calibration):
        calibration = calibration()
    return calibration_warnings(deciding, calibration.checks, calibration.calibrated)
