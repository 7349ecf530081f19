"""Sequential evaluation wired into a run (``ragassay run --sequential``, ``[evaluation] sequential``).

The samples are processed in the seeded order (:func:`ragassay.sampling.seeded_order`, ``[evaluation] seed``), a
batch at a time. After each complete batch every comparison of the declared decision family (``[evaluation]
decide``, default every metric and judge; each system other than the baseline against it) is checked with
:func:`ragassay.analysis.sequential_replay.check` on the values of the batches checked so far (each batch read
back once). A system whose comparisons are all settled after batch k gets no units (no generation, no metric, no
judge) after batch k + ``lookahead``: the batches a pipelined run has started while it checked
(:mod:`ragassay.engine.sequential.pipeline`); the baseline runs while any comparison is open. Checks happen only at
batch boundaries on complete batches, so where a run stops depends on the seed and the values, not on concurrency or
timing; a resumed run re-checks its stored batches and goes on from there, reaching the decisions an
uninterrupted run reaches; and replaying a complete run's scores predicts the live run exactly.

What was decided is stored with the run, in its resolved spec (``spec["sequential"]``, :func:`record`): the
settings, seed and baseline, and per comparison its decision, the sample count at which it settled and its
anytime-valid interval.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...analysis.sequential_replay import OPEN, Comparison, Settled, check
from ...config import LoadedConfig
from ...config.sequential import SequentialSettings
from ...errors import ConfigError

# how the samples were ordered (ragassay.sampling.unit_order_key): whole conversations together
ORDER = "ascending sha256('<seed>:<conversation id>'), then sha256('<seed>:<question id>')"


@dataclasses.dataclass
class SequentialPlan:
    """The decision family of a sequential run and how it stops."""

    settings: SequentialSettings
    seed: int
    baseline: str
    systems: list[str]
    comparisons: list[Comparison]
    settled: list[Settled] = dataclasses.field(default_factory=list)  # after the last check
    seen: int = 0  # samples checked so far
    values: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict, repr=False)  # read so far
    #: each position's conversation in the processing order (None: independent samples): conversations are then
    #: the sequential unit (:mod:`ragassay.analysis.sequential_replay`)
    clusters: list[str] | None = dataclasses.field(default=None, repr=False)

    @classmethod
    def of(cls, plan: Any, settings: SequentialSettings, baseline: str | None = None) -> SequentialPlan:
        """The family of ``plan`` (a :class:`ragassay.engine.runner.RunPlan`) against ``baseline`` (default: the first
        system); :class:`ConfigError` for a column that cannot be tested sequentially."""
        loaded: LoadedConfig = plan.loaded
        systems = [s.name for s in plan.systems]
        baseline = systems[0] if baseline is None else baseline
        if baseline not in systems:
            raise ConfigError(f"--baseline '{baseline}' is not a system of the run. Its systems: {', '.join(systems)}")
        if len(systems) < 2:
            raise ConfigError("a sequential run compares systems: the config declares only one; add another system")
        traits = {label: m.spec().traits for label, m in plan.metrics}
        traits |= {f"judge:{label}": {"direction": "higher", "value_range": [0.0, 1.0]} for label, _ in plan.judges}
        config = loaded.config.evaluation
        family = list(dict.fromkeys(config.decide)) if config.decide is not None else list(traits)
        comparisons = [
            _comparison(system, baseline, column, traits, settings, loaded)
            for column in family
            for system in systems
            if system != baseline
        ]
        if not comparisons:
            raise ConfigError(
                f"{loaded.where('evaluation.decide')}: a sequential run needs at least one metric or judge to decide"
            )
        return cls(settings, config.seed, baseline, systems, comparisons)

    def boundaries(self, total: int) -> list[int]:
        """The sample counts after which the comparisons are checked (the ends of the batches)."""
        from ...analysis.sequential import checkpoints

        return [int(p) for p in checkpoints(total, self.settings.batch, self.settings.max_samples)] if total else []

    def active(self) -> set[str]:
        """Systems that still get units: those in a comparison still open (every system before the first check)."""
        if not self.settled:
            return set(self.systems)
        open_ = [s.comparison for s in self.settled if s.decision == OPEN]
        return {name for c in open_ for name in (c.system, c.baseline)}

    def add(self, store: Any, run_id: str, question_ids: list[str], start: int, total: int) -> None:
        """Read back the values of one batch (the samples ``question_ids``, at positions ``start`` on of the
        seeded order of ``total`` samples) from ``store``: repeat 0 of each metric and judge of the family, NaN
        where there is none (unscored, failed, or a system not processed), as :meth:`RunData.values
        <ragassay.results.RunData.values>` reads them."""
        import numpy as np

        columns = {c.metric for c in self.comparisons}
        if not self.values:
            self.values = {s: {c: np.full(total, np.nan) for c in columns} for s in self.systems}
        position = {qid: start + i for i, qid in enumerate(question_ids)}
        for kind, prefix in (("metric", ""), ("judge", "judge:")):
            for row in store.score_records(run_id, kind, question_ids):
                system, qid, label, repeat, value = row[:5]
                column = self.values.get(system, {}).get(prefix + label)
                if column is not None and repeat == 0:
                    column[position[qid]] = np.nan if value is None else value

    def check(self, seen: int) -> None:
        """Check every comparison on the first ``seen`` samples read so far (:meth:`add`), in the seeded order."""
        found = check(self.values, self.comparisons, self.settings, seen=seen, clusters=self.clusters)
        self.settled, self.seen = found, seen

    def record(self, total: int, processed: dict[str, int]) -> dict[str, Any]:
        """What the run stores (``spec["sequential"]``): settings, seed, order, baseline, samples checked,
        ``processed``: the samples each system was processed on (the complete batches it was given), and per
        comparison its decision, settling point and interval."""
        return {
            "settings": self.settings.model_dump(mode="json"),
            "seed": self.seed,
            "order": ORDER,
            "baseline": self.baseline,
            "samples": total,
            "checked": self.seen,
            "complete": bool(self.settled) and all(s.decision != OPEN for s in self.settled),
            "judged": processed,
            "comparisons": [settled_json(s) for s in self.settled],
        }


def _comparison(system, baseline, column, traits, settings: SequentialSettings, loaded: LoadedConfig) -> Comparison:
    where = loaded.where("evaluation.decide")
    if column not in traits:
        raise ConfigError(
            f"{where}: [evaluation] decide names {column}, which a sequential run cannot test (not a metric or "
            f"judge of this config, or latency_s or tokens: unbounded). Its metrics and judges: {', '.join(traits)}"
        )
    low, high = (traits[column].get("value_range") or (None, None))[:2]
    if low is None or high is None:
        raise ConfigError(
            f"{where}: {column} declares no finite range ([{low}, {high}]), which the anytime-valid procedure needs. "
            "Leave it out of [evaluation] decide for a sequential run (list the metrics that decide)."
        )
    margin = None if settings.margin is None else settings.margin * (high - low)
    direction = traits[column].get("direction", "higher") != "lower"
    return Comparison(system, baseline, column, float(low), float(high), direction, margin)


def settled_json(settled: Settled) -> dict[str, Any]:
    """One comparison as the run stores it (``spec["sequential"]["comparisons"]``)."""
    c = settled.comparison
    return {
        "system": c.system,
        "baseline": c.baseline,
        "metric": c.metric,
        "direction": "higher" if c.higher_is_better else "lower",
        "margin": c.margin,
        "decision": settled.decision,
        "settled_at": settled.settled_at,
        "n": settled.n,
        "mean_gain": settled.mean,
        "ci_low": settled.ci_low,
        "ci_high": settled.ci_high,
        "level": settled.level,
        **({"unit": "conversation"} if settled.clustered else {}),
    }
