"""The CI gate: a candidate run against a baseline run, system by system, with one exit code.

Each system of the candidate run is paired with the system of the same name in the baseline run (which may live
in another results database); on the samples both runs hold (same ``question_id``), every metric of the decision
family (``[evaluation] decide``, default: every metric and judge both runs scored that is not constant) is one
comparison of the paired procedure (:mod:`ragassay.analysis.paired`), all of them one Holm family.

**Non-inferiority** (the default mode): with g the per-sample gain (candidate - baseline, sign-flipped for a
lower-is-better metric) and a margin m, the test of "the gain is -m" is inverted into an interval [L, U] at the
comparison's Holm level, and the pair is

- **pass** when L > -m (shown not worse than the margin);
- **regression** when U < -m (shown worse than the margin), or U < 0 (shown worse by the paired test) while
  L <= -m;
- **inconclusive** otherwise: the samples cannot tell (the summary gives the samples that would settle it).

The margin is ``[gate] margins`` for the metric (its own units), else ``[gate] margin`` x the width of the metric's
declared range (0.02: two points of a 0-1 metric); a metric with an open range needs its own margin. A declared
family may name ``latency_s`` and ``tokens``, each output's seconds and tokens (:mod:`.tokens`, lower is better,
no declared range: give them ``[gate] margins`` in non-inferiority mode).

**Superiority** (``--mode superiority``): the test of "no difference"; a pair is a regression exactly when its
interval lies on the worse side of 0, and passes otherwise.

The same runs, settings and seed give the same numbers in any process.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ConfigError, DatasetError
from .paired import PairInput, PairOutcome, decide_family
from .tokens import OUTPUT_COLUMNS, output_columns
from .usage import SystemUsage, system_usage

EXIT_PASS, EXIT_REGRESSION, EXIT_ERROR = 0, 1, 2
PASS, REGRESSION, INCONCLUSIVE = "pass", "regression", "inconclusive"
NON_INFERIORITY, SUPERIORITY = "non-inferiority", "superiority"


@dataclasses.dataclass(frozen=True)
class GateSettings:
    """How the gate decides (``[gate]`` of the config, overridden by the command line)."""

    mode: str = NON_INFERIORITY
    margin: float = 0.02
    margins: dict[str, float] = dataclasses.field(default_factory=dict)
    on_inconclusive: str = "fail"
    alpha: float = 0.05
    seed: int = 0
    family: list[str] | None = None  # None: [evaluation] decide, else the default family

    @classmethod
    def of(cls, section: Any, **overrides: Any) -> GateSettings:
        """From a ``[gate]`` section (a :class:`ragassay.config.GateSection` or a dict); None overrides are ignored."""
        data = section.model_dump() if hasattr(section, "model_dump") else dict(section or {})
        data |= {k: v for k, v in overrides.items() if v is not None}
        return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data})


@dataclasses.dataclass(frozen=True)
class GateRow:
    """One system x metric: each side's mean over the shared samples, the paired difference and the outcome."""

    system: str
    metric: str
    direction: str  # "higher" | "lower": which is better
    baseline_mean: float | None
    baseline_unscored: int
    candidate_mean: float | None
    candidate_unscored: int
    n: int  # samples both sides scored
    n_discordant: int
    mean_diff: float | None  # candidate - baseline
    ci_low: float | None  # interval of the difference at ``level`` (None: unbounded on that side)
    ci_high: float | None
    level: float | None
    p_holm: float | None
    margin: float | None  # in the metric's units (non-inferiority)
    outcome: str  # pass | regression | inconclusive
    reason: str
    needed: int | None = None  # samples that would settle an inconclusive pair (power 0.8; turns when clustered)
    n_clusters: int = 0  # conversations holding the n samples (n for independent samples)
    needed_clusters: int | None = None  # conversations that would settle it (clustered samples only)


@dataclasses.dataclass(frozen=True)
class Health:
    """One system's failed outputs, outputs not produced yet and unscored values, on both sides."""

    system: str
    baseline_failed: int
    candidate_failed: int
    baseline_missing: int
    candidate_missing: int
    baseline_unscored: int
    candidate_unscored: int


@dataclasses.dataclass(frozen=True)
class GateResult:
    """Everything the gate decided, and what it rests on."""

    candidate_run: str
    baseline_run: str
    baseline_source: str
    settings: GateSettings
    shared_samples: int
    candidate_only_samples: int
    baseline_only_samples: int
    rows: list[GateRow]
    notes: list[str]
    usage_baseline: list[SystemUsage]
    usage_candidate: list[SystemUsage]
    health: list[Health]
    conversations: int | None = None  # conversations the shared samples form (None: independent samples)
    #: with people's labels (``--labelled``): the prediction-powered comparisons behind the labelled rows
    #: (:class:`ragassay.analysis.ppi_verdicts.PPIPair`)
    ppi: list = dataclasses.field(default_factory=list)
    #: with people's labels: per run and rubric, the labels used, reused from other runs and stale
    #: (:meth:`ragassay.results.PeopleLabels.as_dicts`)
    ppi_labels: list = dataclasses.field(default_factory=list)

    @property
    def regressions(self) -> list[GateRow]:
        return [row for row in self.rows if row.outcome == REGRESSION]

    @property
    def inconclusive(self) -> list[GateRow]:
        return [row for row in self.rows if row.outcome == INCONCLUSIVE]

    @property
    def failing(self) -> list[GateRow]:
        """The pairs that fail the gate: regressions, and inconclusive ones unless ``on_inconclusive`` is pass."""
        fail_inconclusive = self.settings.on_inconclusive == "fail"
        return [r for r in self.rows if r.outcome == REGRESSION or (r.outcome == INCONCLUSIVE and fail_inconclusive)]

    @property
    def exit_code(self) -> int:
        """0 when no pair fails, 1 when any does."""
        return EXIT_REGRESSION if self.failing else EXIT_PASS

    def as_dict(self) -> dict[str, Any]:
        """Plain data (for ``--format json``)."""
        extra = {"exit_code": self.exit_code, "regressions": len(self.regressions)}
        return dataclasses.asdict(self) | extra | {"inconclusive_pairs": len(self.inconclusive)}


def gate(candidate, baseline, settings: GateSettings, *, baseline_source: str = "", same_run: bool = False):
    """Compare the candidate run with the baseline run (both :class:`ragassay.results.RunData`; module docstring).

    :raises ConfigError: no system in common, a family metric in neither run, or a margin that cannot be derived.
    :raises DatasetError: the runs share no sample.
    """
    notes: list[str] = ["the baseline is the candidate run itself: nothing can differ"] if same_run else []
    systems = common_systems(candidate.systems, baseline.systems, notes)
    shared, cand_only, base_only = shared_samples(candidate, baseline)
    columns = _columns(candidate, baseline, systems, shared, settings.family, notes)
    keys = [(s, m) for s in systems for m in columns]
    sides = [_side(run, keys, shared) for run in (baseline, candidate)]
    clusters = shared_clusters(candidate, shared)
    rows = gate_rows(
        keys,
        sides[0],
        sides[1],
        _directions(candidate, columns),
        _margins(candidate, columns, settings),
        settings,
        clusters,
    )
    usage = [[system_usage(run, s) for s in systems] for run in (baseline, candidate)]
    return GateResult(
        candidate.id,
        baseline.id,
        baseline_source,
        settings,
        len(shared),
        cand_only,
        base_only,
        rows,
        notes,
        usage[0],
        usage[1],
        _health(candidate, baseline, systems),
        None if clusters is None else len(set(clusters)),
    )


def shared_clusters(candidate, shared: list[str]) -> list[str] | None:
    """The cluster (conversation) of each shared sample, from the candidate run; None when every sample is its
    own (independent samples)."""
    by_id = dict(zip(candidate.question_ids, candidate.clusters))
    clusters = [by_id[q] for q in shared]
    return clusters if len(set(clusters)) < len(clusters) else None


def gate_rows(
    keys, base: dict, cand: dict, directions: dict, margins: dict, settings: GateSettings, clusters=None
) -> list[GateRow]:
    """Decide every (system, metric) of ``keys`` from per-sample arrays of each side (NaN = not scored);
    ``clusters``: each sample's conversation (None: independent samples), flipped whole (:mod:`.paired`)."""
    signs = {m: 1.0 if d != "lower" else -1.0 for m, d in directions.items()}
    ni = settings.mode == NON_INFERIORITY
    inputs = [
        PairInput(k, signs[k[1]] * (cand[k] - base[k]), -margins[k[1]] if ni else 0.0, clusters=clusters) for k in keys
    ]
    outcomes = decide_family(inputs, settings.alpha, settings.seed)
    return [_row(o, base[o.key], cand[o.key], directions[o.key[1]], margins[o.key[1]], ni) for o in outcomes]


def _row(o: PairOutcome, base: np.ndarray, cand: np.ndarray, direction: str, margin: float, ni: bool) -> GateRow:
    sign = 1.0 if direction != "lower" else -1.0
    low, high = o.ci_low, o.ci_high  # on the gain scale
    outcome, reason = _outcome(o, margin, ni)
    ci_low, ci_high = _natural(low, high, sign)
    paired = ~np.isnan(base) & ~np.isnan(cand)
    needed = _needed(o, margin) if outcome == INCONCLUSIVE else None
    clustered = o.n_clusters < o.n
    return GateRow(
        system=o.key[0],
        metric=o.key[1],
        direction=direction,
        baseline_mean=_mean(base[paired]),
        baseline_unscored=int(np.count_nonzero(np.isnan(base))),
        candidate_mean=_mean(cand[paired]),
        candidate_unscored=int(np.count_nonzero(np.isnan(cand))),
        n=o.n,
        n_discordant=int(np.count_nonzero(cand[paired] != base[paired])),
        mean_diff=None if o.mean is None else sign * o.mean,
        ci_low=ci_low,
        ci_high=ci_high,
        level=o.level,
        p_holm=o.p_holm,
        margin=margin if ni else None,
        outcome=outcome,
        reason=reason,
        needed=None if needed is None else (_turns(needed, o) if clustered else needed),
        n_clusters=o.n_clusters,
        needed_clusters=needed if clustered else None,
    )


def _outcome(o: PairOutcome, margin: float, ni: bool) -> tuple[str, str]:
    if o.p_value is None:
        return INCONCLUSIVE, o.reason or "fewer than 2 samples scored by both"
    low = -np.inf if o.ci_low is None else o.ci_low
    high = np.inf if o.ci_high is None else o.ci_high
    if not ni:
        worse = o.in_family and high < 0
        return (REGRESSION, "shown worse by the paired test") if worse else (PASS, o.reason)
    if o.in_family and low > -margin:
        return PASS, ""
    if o.in_family and high < -margin:
        return REGRESSION, "shown worse than the margin"
    if o.in_family and high < 0:
        return REGRESSION, "shown worse by the paired test, and not shown within the margin"
    return INCONCLUSIVE, o.reason or "neither shown within the margin nor shown worse: too few samples to tell"


def _natural(low: float | None, high: float | None, sign: float) -> tuple[float | None, float | None]:
    """An interval on the gain scale back in the metric's units (the sides swap for a lower-is-better metric);
    None stays an open side."""
    low, high = (None if low is None else sign * low), (None if high is None else sign * high)
    return (low, high) if sign > 0 else (high, low)


def _needed(o: PairOutcome, margin: float) -> int | None:
    """Samples (conversations, when clustered: with their per-conversation spread, :mod:`.clustered`) a paired t
    test needs (power 0.8, the pair's level) to tell the gain from -margin."""
    from .power import samples_needed

    if o.unit_sd is None or o.mean is None or o.level is None or o.mean + margin == 0:
        return None
    return samples_needed(o.unit_sd, abs(o.mean + margin), o.level, 0.8)[0]


def _turns(conversations: int, o: PairOutcome) -> int:
    """The turns ``conversations`` conversations hold at the observed turns per conversation."""
    import math

    return math.ceil(conversations * o.n / o.n_clusters)


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def common_systems(cand: Sequence[str], base: Sequence[str], notes: list[str]) -> list[str]:
    """The systems of both runs (candidate order); the others are named in ``notes``."""
    common = [s for s in cand if s in base]
    if not common:
        raise ConfigError(
            f"no system of the candidate run ({', '.join(cand)}) is in the baseline run ({', '.join(base)}). "
            f"The gate pairs systems by name: keep the names, or pick another baseline with --baseline."
        )
    notes += [f"system {s} is new (not in the baseline run): not compared" for s in cand if s not in base]
    notes += [f"system {s} is only in the baseline run (removed?): not compared" for s in base if s not in cand]
    return common


def shared_samples(candidate, baseline) -> tuple[list[str], int, int]:
    """The question_ids of both runs (candidate order), and how many are on one side only."""
    base = set(baseline.question_ids)
    shared = [q for q in candidate.question_ids if q in base]
    if not shared:
        raise DatasetError(
            f"the candidate run {candidate.id[:12]} ({len(candidate.question_ids)} samples) and the baseline run "
            f"{baseline.id[:12]} ({len(baseline.question_ids)} samples) share no question_id, so no sample can be "
            f"paired. Gate against a run of the same dataset (--baseline PATH#RUN), or keep the question_ids stable."
        )
    return shared, len(candidate.question_ids) - len(shared), len(base) - len(shared)


def _columns(candidate, baseline, systems, shared, wanted, notes: list[str]) -> list[str]:
    from .verdicts import stored_family

    declared = wanted if wanted is not None else stored_family(candidate.info.config)
    everything = candidate.columns + [c for c in baseline.columns if c not in candidate.columns]
    everything += [c for c in output_columns(declared) if c not in everything]
    if declared is not None:
        unknown = [m for m in declared if m not in everything]
        if unknown:
            raise ConfigError(
                f"the gate's decision family names {', '.join(unknown)}, which neither run scored. Metrics of the "
                f"runs: {', '.join(everything)}"
            )
        everything = list(dict.fromkeys(declared))
    base, cand = (_with_outputs(run.columns) for run in (baseline, candidate))
    for column in everything:
        if column not in base:
            notes.append(f"metric {column} is only in the candidate run: not compared")
        elif column not in cand:
            notes.append(f"metric {column} is only in the baseline run: not compared")
    columns = [c for c in everything if c in cand and c in base]
    if not columns:
        raise ConfigError("the candidate and baseline runs have no metric or judge in common: nothing to compare")
    if declared is None:
        constant = [c for c in columns if _constant(c, systems, shared, candidate, baseline)]
        if constant:
            notes.append(f"left out, the same value on every system and sample of both runs: {', '.join(constant)}")
        columns = [c for c in columns if c not in constant]
    return columns


def _constant(column: str, systems, shared, candidate, baseline) -> bool:
    from .paired import no_variation

    values = np.concatenate([aligned(run, s, column, shared) for run in (candidate, baseline) for s in systems])
    scored = values[~np.isnan(values)]
    return len(scored) > 0 and no_variation(scored)


def _with_outputs(columns: list[str]) -> list[str]:
    """A run's metric columns and the output columns (latency_s, tokens) every run has."""
    return columns + [c for c in OUTPUT_COLUMNS if c not in columns]


def aligned(run, system: str, column: str, shared: list[str]) -> np.ndarray:
    """The values of (``system``, ``column``) of ``run`` on the ``shared`` question ids, in that order (an output
    column, latency_s or tokens, from the outputs)."""
    output = column in OUTPUT_COLUMNS and column not in run.columns
    values = OUTPUT_COLUMNS[column](run, system) if output else run.values(system, column)
    position = run.position
    return np.array([values[position[q]] for q in shared], dtype=float)


def _side(run, keys, shared) -> dict:
    return {(s, m): aligned(run, s, m, shared) for s, m in keys}


def _directions(run, columns) -> dict[str, str]:
    return {c: "lower" if c in OUTPUT_COLUMNS and c not in run.columns else run.direction(c) for c in columns}


def _margins(run, columns, settings: GateSettings) -> dict[str, float]:
    return {column: margin_for(run, column, settings) for column in columns}


def margin_for(run, column: str, settings: GateSettings) -> float:
    """The margin of ``column`` in its own units: ``[gate] margins``, else ``margin`` x its declared range."""
    if column in settings.margins:
        return float(settings.margins[column])
    low, high = run.value_range(column)
    if settings.mode == NON_INFERIORITY and (low is None or high is None):
        raise ConfigError(
            f"[gate] margin: metric {column} has an open range, so a share of it is no margin. Give it one in "
            f"its own units, e.g. [gate] margins = {{ {column} = 0.1 }}"
        )
    return settings.margin * ((high - low) if low is not None and high is not None else 1.0)


def _health(candidate, baseline, systems) -> list[Health]:
    def counts(run, system):
        usage = system_usage(run, system)
        unscored = sum(n for (s, _), n in run.unscored.items() if s == system)
        return usage.failed, usage.missing, unscored

    rows = []
    for system in systems:
        (bf, bm, bu), (cf, cm, cu) = counts(baseline, system), counts(candidate, system)
        rows.append(Health(system, bf, cf, bm, cm, bu, cu))
    return rows


DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")


def parse_baseline(value: str) -> tuple[str | None, str | None]:
    """``--baseline`` as (database, run): ``RUN`` (an id or prefix in the project's own database) gives
    (None, RUN); a path or URL of another results database gives (PATH, None), and ``PATH#RUN`` (PATH, RUN).

    A value is a database when it has ``#``, ``://`` or a path separator, ends in .db/.sqlite/.sqlite3, or
    names an existing file.
    """
    import os
    from pathlib import Path

    value = value.strip()
    database, hash_sign, run = value.rpartition("#") if "#" in value else (value, "", "")
    separators = {"/", os.sep, *(os.altsep or "")}
    is_database = (
        bool(hash_sign)
        or "://" in database
        or any(sep in database for sep in separators)
        or database.lower().endswith(DATABASE_SUFFIXES)
        or Path(database).is_file()
    )
    if not database or (hash_sign and not run):
        raise ConfigError(
            f"--baseline {value!r} is incomplete: give a run id, a results database (path or URL), or PATH#RUN"
        )
    return (database, run or None) if is_database else (None, database)
