"""Re-judging a judge's calibration items with the configured judge (``ragassay judges check``).

The calibration run is an ordinary run of the project's config narrowed to one judge, no metrics, the systems
people labelled and the samples they labelled (:func:`calibration_plan`): its fingerprint is its own, so it is
stored like any run, resumed when the check is run again, and its model calls go through the response cache.
The labelled outputs are not produced again: the runner copies them from the run they were labelled in (an output
is keyed by its system's spec and its sample), and a system whose config changed since is refused before anything
runs (:func:`require_stored_outputs`). What the check decided is stored with the calibration run, in its spec
(``spec["judge_check"]``, :func:`store_check`), where ``compare`` and ``gate`` find it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from .executor import executor_for
from .interruptible import run_interruptibly
from .runner import Runner, RunPlan
from .spool import SampleSpool


def judge_identity(plan: RunPlan, judge: str) -> str:
    """The identity of the configured judge ``judge`` (its label in ``[evaluation] judges``)."""
    judges = dict(plan.judges)
    if judge not in judges:
        configured = ", ".join(judges) or "none"
        raise ConfigError(f"the config has no judge '{judge}' in [evaluation] judges (its judges: {configured})")
    built = judges[judge].build(plan.context)
    identity = getattr(built, "identity", None)
    if not identity:
        raise ConfigError(
            f"judge '{judge}' has no identity: judges check works on LLM judges (ragassay.llm.LLMJudging)"
        )
    return str(identity)


def calibration_plan(plan: RunPlan, judge: str, items: Iterable[tuple[str, str]]) -> RunPlan:
    """``plan`` narrowed to judge ``judge``, the systems of ``items`` ((system, question_id) pairs) and their
    samples, without metrics."""
    items = set(items)
    systems = {system for system, _ in items}
    questions = {question for _, question in items}
    missing = sorted(systems - {s.name for s in plan.systems})
    if missing:
        raise ConfigError(
            f"the labelled system(s) {', '.join(missing)} are not in this config's systems: the calibration items "
            "are re-judged on the outputs people labelled, so check with a config that keeps those systems"
        )
    samples = SampleSpool.write(s for s in plan.samples if s.question_id in questions)
    absent = len(questions) - len(samples)
    if absent:
        raise ConfigError(f"{absent} labelled samples are not in this config's dataset: check with the same dataset")
    return dataclasses.replace(
        plan,
        systems=[s for s in plan.systems if s.name in systems],
        metrics=[],
        judges=[(label, j) for label, j in plan.judges if label == judge],
        samples=samples,
        warnings=[],
        _fingerprint=None,
    )


def require_stored_outputs(plan: RunPlan, store: Any) -> None:
    """Refuse (ConfigError) when a system of ``plan`` has no stored output under its current spec: its config
    changed since its outputs were labelled, and running it would make new outputs nobody labelled."""
    for system in plan.systems:
        if not store.has_reusable("", [plan.system_key(system)]):
            raise ConfigError(
                f"system '{system.name}' changed since its outputs were labelled (no stored output has its current "
                "spec): judges check re-judges the labelled outputs, so check with the config of the labelled run "
                "with only the judge changed"
            )


def run_calibration(plan: RunPlan, store: Any, description: str) -> str:
    """Run (or resume) the calibration ``plan`` in ``store``; the run's id."""
    executor = executor_for(plan.loaded.config, store)
    with store.lease(plan.fingerprint()) as lease:
        runner = Runner(plan, store, executor=executor, lease=lease, description=description)
        summary = run_interruptibly(lambda: runner.run())
    if summary.failed:
        reasons = "; ".join(f"{s}/{q}: {why}" for s, q, why in summary.failures[:3])
        raise ConfigError(f"the calibration run {summary.run_id[:12]} could not re-judge every item: {reasons}")
    return summary.run_id


def store_check(store: Any, run_id: str, spec: dict[str, Any], record: dict[str, Any]) -> None:
    """Keep what a check decided with its calibration run (``spec["judge_check"]``)."""
    store.set_run_spec(run_id, json.dumps({**spec, "judge_check": record}))
