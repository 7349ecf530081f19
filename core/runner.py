"""The runner: every system on every sample, every metric and judge on every output, stored as it goes.

Work is resumable: a run is identified by a fingerprint of the resolved config and data, and a re-run skips
what is stored. Failed units are retried on a re-run (their rows are replaced, never duplicated).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from typing import Any, Callable

from . import __version__
from .components import ComponentContext, Corpus, RAGSystem
from .config import LoadedConfig
from .errors import RagassayError
from .executor import Executor, LocalExecutor
from .models import Judgement, MetricValue, Sample, Unscored
from .registry import Registry
from .store.database import ResultsStore, StoredUnit, UnitResult
from .store.lease import Lease
from .datasets import load_corpus, load_samples, resolve_dataset
from .systems import ResolvedComponent, ResolvedSystem, build_system, resolve_component, resolve_systems

FLUSH_EVERY_S = 0.25
FLUSH_BATCH = 512


@dataclasses.dataclass
class RunPlan:
    """Everything resolved from a config before anything runs."""

    loaded: LoadedConfig
    systems: list[ResolvedSystem]
    metrics: list[tuple[str, ResolvedComponent]]
    judges: list[tuple[str, ResolvedComponent]]
    samples: list[Sample]
    corpus: Corpus
    context: ComponentContext

    def spec(self) -> dict[str, Any]:
        return {
            "systems": [s.spec().model_dump(mode="json") for s in self.systems],
            "metrics": {label: m.spec().model_dump(mode="json") for label, m in self.metrics},
            "judges": {label: j.spec().model_dump(mode="json") for label, j in self.judges},
        }

    def fingerprint(self) -> str:
        digest = hashlib.sha256(json.dumps(self.spec(), sort_keys=True).encode())
        digest.update(self.corpus.content_hash().encode())
        for sample in self.samples:
            digest.update(sample.model_dump_json().encode())
        digest.update(__version__.encode())
        return digest.hexdigest()


@dataclasses.dataclass
class RunSummary:
    """What a run did."""

    run_id: str
    resumed: bool
    units: int
    skipped: int = 0
    completed: int = 0
    failed: int = 0
    metric_errors: int = 0
    elapsed_s: float = 0.0
    failures: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (system, qid, reason)
    warnings: list[str] = dataclasses.field(default_factory=list)


def plan_run(loaded: LoadedConfig, registry: Registry, *, no_cache: bool = False) -> RunPlan:
    """Resolve systems, metrics, judges and load the data; raises clear errors for bad input.

    ``no_cache`` turns the LLM response cache off for this run (``ragassay run --no-cache``); components see
    the run's LLM settings in ``context.settings["llm"]``.
    """
    from .llm.settings import runtime_settings

    config = loaded.config
    cache_dir = loaded.base_dir / config.project.cache_dir
    settings = {"llm": runtime_settings(config.llm, cache_dir, no_cache=no_cache)}
    context = ComponentContext(project_dir=loaded.base_dir, cache_dir=cache_dir, registry=registry,
                               settings=settings)
    systems = resolve_systems(loaded, registry)

    metrics = [(ref.key, resolve_component(registry, "metric", ref, loaded, f"evaluation.metrics[{i}]"))
               for i, ref in enumerate(config.evaluation.metrics)]
    judges = [(ref.key, resolve_component(registry, "judge", ref, loaded, f"evaluation.judges[{i}]"))
              for i, ref in enumerate(config.evaluation.judges)]
    dataset = resolve_dataset(loaded, registry)
    samples = load_samples(dataset, context, config.dataset.limit)
    corpus = load_corpus(loaded, registry, context, dataset)
    return RunPlan(loaded, systems, metrics, judges, samples, corpus, context)


class Runner:
    """Executes a :class:`RunPlan` against a :class:`ResultsStore`."""

    def __init__(self, plan: RunPlan, store: ResultsStore, *, executor: Executor | None = None,
                 on_result: Callable[[UnitResult], None] | None = None, lease: Lease | None = None):
        self.plan = plan
        self.lease = lease  # held by the caller for this plan's fingerprint; told which run it covers
        self.store = store
        self.executor = executor or LocalExecutor(plan.loaded.config.project.concurrency)
        self.on_result = on_result or (lambda result: None)
        self.metrics = [(label, m.build(plan.context)) for label, m in plan.metrics]
        self.judges = [(label, j.build(plan.context)) for label, j in plan.judges]

    def open_run(self, *, new: bool = False) -> tuple[str, bool]:
        """Find the run with this plan's fingerprint (resume) or create one. Returns (run id, resumed)."""
        fingerprint = self.plan.fingerprint()
        existing = None if new else self.store.find_run(fingerprint)
        if existing is not None:
            return existing["id"], True
        run_id = hashlib.sha256(f"{fingerprint}{time.time_ns()}".encode()).hexdigest()[:16]
        config = self.plan.loaded.config
        self.store.create_run(
            {
                "id": run_id, "fingerprint": fingerprint, "project": config.project.name,
                "config_path": str(self.plan.loaded.path), "config_json": config.model_dump_json(),
                "spec_json": json.dumps(self.plan.spec()), "ragassay_version": __version__,
                "sample_count": len(self.plan.samples),
            },
            [(s.name, s.spec().model_dump_json()) for s in self.plan.systems],
            self.plan.samples,
        )
        return run_id, False

    def pending(self, run_id: str) -> tuple[list[tuple[ResolvedSystem, Sample, StoredUnit | None]], int]:
        """Units still to do, and how many are already complete."""
        stored = self.store.stored_units(run_id)
        wanted_metrics = {label for label, _ in self.metrics}
        wanted_judges = {label for label, _ in self.judges}
        todo, skipped = [], 0
        for system in self.plan.systems:
            for sample in self.plan.samples:
                unit = stored.get((system.name, sample.question_id))
                if unit and unit.status == "ok" and wanted_metrics <= unit.metrics and wanted_judges <= unit.judges:
                    skipped += 1
                else:
                    todo.append((system, sample, unit))
        return todo, skipped

    async def run(self, *, new: bool = False, on_start: Callable[[RunSummary], None] | None = None) -> RunSummary:
        run_id, resumed = self.open_run(new=new)
        if self.lease is not None:
            self.lease.attach(run_id)
        todo, skipped = self.pending(run_id)
        summary = RunSummary(run_id, resumed, units=len(todo) + skipped, skipped=skipped)
        if on_start:
            on_start(summary)
        start = time.perf_counter()
        built = self._build_systems({system.name for system, _, _ in todo})
        summary.warnings += self.plan.context.warnings
        for name, rag in built.items():
            if not isinstance(rag, Exception):
                summary.warnings += [f"{name}: {w}" for w in rag.check_samples(self.plan.samples)]
        buffer: list[UnitResult] = []
        last_flush = time.perf_counter()
        status = "interrupted"
        try:
            async for result in self.executor.map(lambda unit: self._process(built, unit), todo):
                buffer.append(result)
                self._count(summary, result)
                self.on_result(result)
                if len(buffer) >= FLUSH_BATCH or time.perf_counter() - last_flush >= FLUSH_EVERY_S:
                    self.store.write_units(run_id, buffer)
                    buffer, last_flush = [], time.perf_counter()
            status = "complete"
        finally:
            if buffer:
                self.store.write_units(run_id, buffer)
            self.store.set_run_status(run_id, status)
            summary.elapsed_s = time.perf_counter() - start
            for rag in built.values():
                if not isinstance(rag, Exception):
                    await rag.aclose()
        return summary

    def _build_systems(self, names: set[str]) -> dict[str, RAGSystem | Exception]:
        """Build and prepare each system that has work; a failure fails that system's units, not the run."""
        built: dict[str, RAGSystem | Exception] = {}
        for system in self.plan.systems:
            if system.name not in names:
                continue
            try:
                rag = build_system(system, self.plan.context)
                rag.prepare(self.plan.corpus)
                built[system.name] = rag
            except RagassayError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded per unit
                built[system.name] = exc
        return built

    async def _process(self, built: dict[str, RAGSystem | Exception],
                       unit: tuple[ResolvedSystem, Sample, StoredUnit | None]) -> UnitResult:
        system, sample, stored = unit
        rag = built[system.name]
        if stored is not None and stored.status == "ok":
            output = self.store.load_output(stored.output_id)
            result = UnitResult(system.name, sample.question_id, "ok", output, output_id=stored.output_id)
            await self._score(result, sample, skip_metrics=stored.metrics, skip_judges=stored.judges)
            return result
        replaces = stored.output_id if stored is not None else None
        if isinstance(rag, Exception):
            return UnitResult(system.name, sample.question_id, "failed",
                              error=f"system preparation failed: {_describe(rag)}", replaces=replaces)
        start = time.perf_counter()
        try:
            output = await rag.answer(sample)
        except Exception as exc:  # noqa: BLE001 - a component error fails this sample only
            return UnitResult(system.name, sample.question_id, "failed", error=_describe(exc), replaces=replaces)
        output.latency_s = time.perf_counter() - start
        result = UnitResult(system.name, sample.question_id, "ok", output, replaces=replaces)
        await self._score(result, sample)
        return result

    async def _score(self, result: UnitResult, sample: Sample, skip_metrics: set[str] = frozenset(),
                     skip_judges: set[str] = frozenset()) -> None:
        for label, metric in self.metrics:
            if label not in skip_metrics:
                result.metrics.append(await _metric_value(label, metric, sample, result.output))
        for label, judge in self.judges:
            if label not in skip_judges:
                result.judgements.append(await _judgement(label, judge, sample, result.output))

    @staticmethod
    def _count(summary: RunSummary, result: UnitResult) -> None:
        summary.completed += 1
        if result.status == "failed":
            summary.failed += 1
            summary.failures.append((result.system, result.question_id, result.error or ""))
        summary.metric_errors += sum(1 for m in result.metrics if (m.unscored_reason or "").startswith("error:"))


async def _metric_value(label: str, metric: Any, sample: Sample, output: Any) -> MetricValue:
    try:
        value = await metric.ascore(sample, output)
    except Exception as exc:  # noqa: BLE001 - recorded as unscored with the reason
        return MetricValue(metric=label, value=None, unscored_reason=f"error: {_describe(exc)}")
    if isinstance(value, Unscored):
        return MetricValue(metric=label, value=None, unscored_reason=value.reason)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return MetricValue(metric=label, value=None, unscored_reason=f"error: metric returned {value!r}")
    if not math.isfinite(number):
        return MetricValue(metric=label, value=None, unscored_reason=f"error: metric returned {number}")
    return MetricValue(metric=label, value=number)


async def _judgement(label: str, judge: Any, sample: Sample, output: Any) -> Judgement:
    try:
        verdict = await judge.judge(sample, output)
    except Exception as exc:  # noqa: BLE001
        return Judgement(judge=label, verdict="unscored", score=None, explanation=f"error: {_describe(exc)}")
    return verdict.model_copy(update={"judge": label})


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__

