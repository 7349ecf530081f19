"""The runner: every system on every sample, every metric and judge on every output, stored as it goes.

Work is resumable and reusable:

- a run is identified by a fingerprint of the resolved components (nested ones included) and the data; a
  re-run skips what is stored, and retries failed units (their rows are replaced, never duplicated);
- an output is keyed by its system's resolved spec (without the system's name, with the corpus) and the sample,
  so a unit whose output an earlier run already produced is copied, not recomputed, and two systems of one
  run with the same spec (a grid cell equal to another system) are run once; metric values and judgements
  are keyed by their own spec and copied along with the output when it matches;
- ``repeats = N > 1`` (``ragassay run --repeat N``) scores every model-calling metric and judge N times per
  unit (see :mod:`ragassay.engine.scoring`); a run re-opened with a larger N adds the missing repeats.

Nothing here grows with the number of samples: the plan spools them to disk (:mod:`ragassay.engine.spool`) and the
work is made chunk by chunk from that spool and the store (:mod:`ragassay.engine.work`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..components import ComponentContext, Corpus, DerivedMetric, RAGSystem
from ..config import LoadedConfig
from ..config.sequential import SequentialSettings
from ..errors import ConfigError, RagassayError
from ..llm.budget import Budget, BudgetLedger, using
from ..registry import Registry
from ..sampling import partial_text
from ..store.protocols import SettlingWriter
from ..store.units import StoredUnit, UnitResult, WriteContext
from .executor import Executor, LocalExecutor
from .flushing import WriteBuffer, with_quiet_writes
from .processing import (
    ItemInputs,
    UnitDigest,
    UnitProcessor,
    WorkerJob,
    WorkItem,
    answer_metric_warnings,
    no_answer_reasons,
    slim,
    stored_pairs,
)
from .project import Project
from .reference_check import reference_warnings
from .requirements import listed_components, retrieval_warnings, spool_samples
from .scoring import Scorers, describe
from .spool import SampleSpool
from .systems import (
    ResolvedComponent,
    ResolvedSystem,
    build_system,
    resolve_component,
    resolve_systems,
    with_compat,
)
from .work import WorkStream

#: The status of a run whose first session stopped on an error before any work (nothing stored).
FAILED = "failed"

if TYPE_CHECKING:
    from ..store.database import ResultsStore
    from ..store.lease import Lease


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class RunPlan:
    """Everything resolved from a config before anything runs."""

    loaded: LoadedConfig
    systems: list[ResolvedSystem]
    metrics: list[tuple[str, ResolvedComponent]]
    judges: list[tuple[str, ResolvedComponent]]
    samples: SampleSpool  # read once from the dataset source, kept on disk (iterate it, or len() it)
    corpus: Corpus
    context: ComponentContext
    warnings: list[str] = dataclasses.field(default_factory=list)
    _fingerprint: str | None = dataclasses.field(default=None, repr=False)

    def spec(self) -> dict[str, Any]:
        return {
            "systems": [s.spec().model_dump(mode="json") for s in self.systems],
            "metrics": {label: m.spec().model_dump(mode="json") for label, m in self.metrics},
            "judges": {label: j.spec().model_dump(mode="json") for label, j in self.judges},
        }

    def fingerprint(self) -> str:
        """sha256 of the spec, the corpus, the content keys, every sample as given and the version (streamed
        from the spool; computed once)."""
        if self._fingerprint is None:
            digest_ = hashlib.sha256(json.dumps(self.spec(), sort_keys=True).encode())
            digest_.update(self.corpus_hash.encode())
            if any(self.content_keys.values()):  # only then: fingerprints of other runs stay as they were
                digest_.update(json.dumps(self.content_keys, sort_keys=True).encode())
            for raw in self.samples.sample_bytes():
                digest_.update(raw)
            digest_.update(__version__.encode())
            self._fingerprint = digest_.hexdigest()
        return self._fingerprint

    @functools.cached_property
    def corpus_hash(self) -> str:
        """sha256 of the corpus (computed once: it keys the fingerprint and every system key)."""
        return self.corpus.content_hash()

    @functools.cached_property
    def content_keys(self) -> dict[str, str | None]:
        """system name -> :meth:`RAGSystem.content_key <ragassay.RAGSystem.content_key>` (None for most)."""
        return {s.name: s.rag.info.cls.content_key(s.rag.options, self.context) for s in self.systems}

    def system_key(self, system: ResolvedSystem) -> str:
        """What decides a system's outputs: its resolved spec without its name, the corpus, and the content key
        of a system whose answers come from a file or code outside its options."""
        spec = system.spec().model_dump(mode="json")
        spec.pop("name")
        payload = {"system": spec, "corpus": self.corpus_hash}
        if self.content_keys.get(system.name):
            payload["content"] = self.content_keys[system.name]
        return digest(json.dumps(payload, sort_keys=True))

    def write_context(self) -> WriteContext:
        """Keys and prices the store needs to write this plan's rows."""
        from ..llm.pricing import PriceTable

        return WriteContext(
            prices=PriceTable(self.loaded.config.llm.prices),
            metric_keys={label: _spec_key(m) for label, m in self.metrics},
            judge_keys={label: _spec_key(j) for label, j in self.judges},
        )


def _spec_key(component: ResolvedComponent) -> str:
    return digest(component.spec().model_dump_json())


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
    reused: int = 0
    elapsed_s: float = 0.0
    failures: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)  # (system, qid, reason)
    warnings: list[str] = dataclasses.field(default_factory=list)
    empty_retrievals: dict[str, int] = dataclasses.field(default_factory=dict)  # system -> outputs without context
    budget_limited: str | None = None  # why the session stopped at its budget (None: it did not)
    samples_done: int = 0  # with budget_limited: samples whose every unit is complete (a seeded random subset)
    samples: int = 0  # the run's samples
    units_missing: int = 0  # with budget_limited: units not run or not fully scored
    #: a sequential run: what it decided (ragassay.engine.sequential.plan.record)
    sequential: dict[str, Any] | None = None

    order_seed: int | None = None  # the seed of the sample order; None: the dataset's order

    def partial_note(self) -> str | None:
        """``partial: N of M samples, a uniform random subset (seed S) (...)`` for a budget-limited session (or
        the first N in file order), else None."""
        if self.budget_limited is None:
            return None
        return (
            f"{partial_text(self.samples_done, self.samples, self.order_seed)} "
            f"(budget-limited: {self.budget_limited}; {self.units_missing} of {self.units} units not run or "
            "not fully scored; re-run with a larger budget to resume)"
        )


def plan_run(loaded: LoadedConfig | Project, registry: Registry | None = None, *, no_cache: bool = False) -> RunPlan:
    """Resolve systems (nested components included), metrics, judges and load the data; raises clear errors
    for bad input before any work starts.

    ``no_cache`` turns the LLM response cache off for this run (``ragassay run --no-cache``); components see
    the run's LLM settings in ``context.settings["llm"]``.
    """
    project = loaded if isinstance(loaded, Project) else Project.load(loaded, registry, no_cache=no_cache)
    project.require_systems()
    config, registry = project.config, project.registry
    systems = resolve_systems(project.loaded, registry)
    compat = config.evaluation.compat
    metric_refs = [with_compat(ref, registry, compat) for ref in config.evaluation.metrics]
    metrics = [
        (ref.key, resolve_component(registry, "metric", ref, project.loaded, f"evaluation.metrics[{i}]"))
        for i, ref in enumerate(metric_refs)
    ]
    _check_derived(metrics, project.loaded, project.context)
    judges = [
        (ref.key, resolve_component(registry, "judge", ref, project.loaded, f"evaluation.judges[{i}]"))
        for i, ref in enumerate(config.evaluation.judges)
    ]
    listed = listed_components(config, metrics, judges)
    samples, seen = spool_samples(project, listed)
    corpus = project.corpus()
    warnings = reference_warnings(samples, corpus.documents, project.loaded.where("dataset"), seen.referenced)
    warnings += seen.warnings + retrieval_warnings(systems, listed)
    warnings += answer_metric_warnings(config, systems, metrics, judges)
    return RunPlan(project.loaded, systems, metrics, judges, samples, corpus, project.context, warnings)


def _check_derived(
    metrics: list[tuple[str, ResolvedComponent]], loaded: LoadedConfig, context: ComponentContext
) -> None:
    """A derived metric's inputs must be configured metrics (and not itself)."""
    labels = [label for label, _ in metrics]
    for index, (label, metric) in enumerate(metrics):
        if not issubclass(metric.info.cls, DerivedMetric):
            continue
        missing = [name for name in metric.build(context).inputs() if name not in labels or name == label]
        if missing:
            raise ConfigError(
                f"{loaded.where(f'evaluation.metrics[{index}]')}: derived metric '{label}' is computed "
                f"from {', '.join(missing)}, which [evaluation] metrics does not list. Add "
                f"{'it' if len(missing) == 1 else 'them'}, or change its inputs."
            )


class Runner:
    """Executes a :class:`RunPlan` against a :class:`ResultsStore`."""

    def __init__(
        self,
        plan: RunPlan,
        store: ResultsStore,
        *,
        executor: Executor | None = None,
        on_result: Callable[[UnitResult], None] | None = None,
        description: str = "",
        lease: Lease | None = None,
        repeats: int = 1,
        budget: Budget | None = None,
        sequential: SequentialSettings | bool | None = None,
        baseline: str | None = None,
        ledger: BudgetLedger | None = None,
    ):
        self.plan = plan
        self.ledger = ledger  # in place of the budget's: e.g. the cache-only pass of ragassay.engine.estimate.cache
        self.lease = lease  # held by the caller for this plan's fingerprint; told which run it covers
        self.store = store
        self.executor = executor or LocalExecutor(plan.loaded.config.project.concurrency)
        self.on_result = on_result or (lambda result: None)
        self.description = description
        if repeats < 1:
            raise ConfigError(f"--repeat must be at least 1, got {repeats}")
        self.repeats = repeats
        self.scorers = Scorers.ordered(
            [(label, m.build(plan.context)) for label, m in plan.metrics],
            [(label, j.build(plan.context)) for label, j in plan.judges],
        )
        self.system_keys = {s.name: plan.system_key(s) for s in plan.systems}
        self.write_context = plan.write_context()
        self._sample_keys: dict[str, str] = {}
        evaluation = plan.loaded.config.evaluation
        self.budget = budget if budget is not None else evaluation.budget
        if self.budget is not None and not self.budget.is_set():
            self.budget = None
        if self.budget is not None and hasattr(self.executor, "process"):
            raise ConfigError(
                "a budget needs the local executor (its ledger is one per process); run without --budget and "
                "[evaluation] budget, or with --executor local"
            )
        sequential = evaluation.sequential if sequential is None else sequential or None  # False: off
        self.sequential = None if sequential is None else _sequential_plan(plan, sequential, baseline)
        if self.sequential is not None and hasattr(self.executor, "process"):
            raise ConfigError(
                "a sequential run needs the local executor (it checks after each batch); run with --executor local"
            )
        if self.sequential is not None and evaluation.order == "file":
            raise ConfigError(
                f"{plan.loaded.where('evaluation.order')}: a sequential run processes the samples in the seeded "
                'order; remove [evaluation] order = "file" (or run with --no-sequential)'
            )
        self.order_seed = evaluation.seed if evaluation.order == "seeded" else None  # None: the dataset's order
        self._ordered: SampleSpool | None = None

    def open_run(self, *, new: bool = False) -> tuple[str, bool]:
        """Find the run with this plan's fingerprint (resume) or create one. Returns (run id, resumed)."""
        fingerprint = self.plan.fingerprint()
        existing = None if new else self.store.find_run(fingerprint)
        if existing is not None:
            self._keep_order(existing)
            return existing["id"], True
        run_id = hashlib.sha256(f"{fingerprint}{time.time_ns()}".encode()).hexdigest()[:16]
        config = self.plan.loaded.config
        self.store.create_run(
            {
                "id": run_id,
                "fingerprint": fingerprint,
                "project": config.project.name,
                "config_path": str(self.plan.loaded.path),
                "config_json": config.model_dump_json(),
                "spec_json": json.dumps(self.plan.spec()),
                "ragassay_version": __version__,
                "sample_count": len(self.plan.samples),
                "description": self.description or None,
                "warnings_json": json.dumps(self.plan.warnings),
            },
            [(s.name, s.spec().model_dump_json()) for s in self.plan.systems],
            self.plan.samples.pairs(),
        )
        return run_id, False

    def _keep_order(self, existing: dict[str, Any]) -> None:
        """A resumed run keeps the sample order it was created with (its stored ``[evaluation] order`` and
        ``seed``), so what a partial run has scored stays the start of one order (a sequential run keeps its own)."""
        raw = existing.get("config_json")
        evaluation = (json.loads(raw).get("evaluation") or {}) if raw else {}
        if "order" not in evaluation or self.sequential is not None:
            return  # created before [evaluation] order existed: as configured now
        seed = evaluation.get("seed", 42) if evaluation["order"] == "seeded" else None
        if seed != self.order_seed:
            self.order_seed, self._ordered = seed, None
            self.plan.warnings.append(
                f"this run was created with [evaluation] order = {evaluation['order']!r}"
                + (f", seed {seed}" if seed is not None else "")
                + "; resuming in that order (start a separate run with --new for the new order)"
            )

    def work(self, run_id: str, *, reuse: bool = True, samples=None, systems=None) -> WorkStream:
        """The run's work, streamed from the spooled samples and the store (see :mod:`ragassay.engine.work`).

        With ``reuse``, outputs of earlier runs with the same keys are marked for copying. ``samples`` and
        ``systems``: only these (a sequential run's batch and the systems still running).
        """
        samples = self.samples() if samples is None else samples
        systems = self.plan.systems if systems is None else systems
        return WorkStream(samples, systems, self.system_keys, self._is_done, self.store, run_id, reuse=reuse)

    def samples(self) -> SampleSpool:
        """The samples in processing order (``[evaluation] order``): the seeded random order of
        :meth:`SampleSpool.shuffled <ragassay.engine.spool.SampleSpool.shuffled>` (``[evaluation] seed``, the default),
        or the dataset's."""
        if self.order_seed is None:
            return self.plan.samples
        if self._ordered is None:
            self._ordered = self.plan.samples.shuffled(self.order_seed)
        return self._ordered

    def _is_done(self, unit: StoredUnit) -> bool:
        """Whether a stored unit is complete: an ok output with every metric, judge and repeat."""
        scorers = self.scorers
        return (
            unit.status == "ok"
            and scorers.labels <= unit.metrics
            and scorers.judge_labels <= unit.judges
            and self._repeats_done(unit)
        )

    def _repeats_done(self, unit: StoredUnit) -> bool:
        """Whether every repeat 1..N-1 of the unit's model-calling labels is stored."""
        wanted = self.scorers.repeated(unit.calling) if self.repeats > 1 else []
        return all((label, r) in unit.repeats for label in wanted for r in range(1, self.repeats))

    async def run(self, *, new: bool = False, on_start: Callable[[RunSummary], None] | None = None) -> RunSummary:
        """Run (or resume) the plan. ``new``: a fresh run that neither resumes nor reuses earlier outputs."""
        run_id, resumed = self.open_run(new=new)
        if self.lease is not None:
            self.lease.attach(run_id)
        work = self.work(run_id, reuse=not new)
        skipped, names = work.survey()
        units = len(self.plan.systems) * len(self.plan.samples)
        summary = RunSummary(run_id, resumed, units=units, skipped=skipped, warnings=list(self.plan.warnings))
        if on_start:
            on_start(summary)
        start = time.perf_counter()
        built = self._build_or_fail(run_id, resumed, names if units > skipped else set())
        summary.warnings += [w for w in self.plan.context.warnings if w not in summary.warnings]
        for name, rag in built.items():
            if not isinstance(rag, Exception):
                summary.warnings += [f"{name}: {w}" for w in rag.check_samples(self.plan.samples)]
        status = "interrupted"  # until the work is done: Ctrl-C or a failure (a full disk) leaves it so
        if self.ledger is None and self.budget is not None:
            self.ledger = BudgetLedger(self.budget, self.write_context.prices)
        ledger = self.ledger
        try:
            done = "complete"
            if self.sequential is not None:
                with using(ledger):
                    from .sequential.pipeline import run_in_batches

                    done = await run_in_batches(self, run_id, built, ledger, summary, reuse=not new)
            elif units > skipped:  # nothing to do starts no executor (no Ray workers for a complete run)
                with using(ledger):
                    await self._execute(run_id, built, _until_stopped(work.items(), ledger), summary)
            status = self._budget_status(run_id, ledger, summary, done)
        finally:
            summary.warnings += [w for w in getattr(self.executor, "warnings", []) if w not in summary.warnings]
            summary.warnings += _empty_retrieval_warnings(summary, built)
            self.store.finish_run(run_id, status, summary.warnings)
            summary.elapsed_s = time.perf_counter() - start
            for rag in built.values():
                if not isinstance(rag, Exception):
                    await rag.aclose()
        return summary

    def _budget_status(self, run_id: str, ledger: BudgetLedger | None, summary: RunSummary, done: str) -> str:
        """``done`` ('complete', or 'settled' for a sequential run that stopped early), or 'budget-limited' (with
        the summary's account of what is missing) when the budget stopped the session before every unit was
        complete."""
        summary.samples, summary.order_seed = len(self.plan.samples), self.order_seed
        if ledger is None or ledger.stopped is None:
            return done
        done_units, done_samples = self.work(run_id).done()
        if done_units >= summary.units:
            return "complete"
        summary.budget_limited = ledger.stopped
        summary.samples_done, summary.units_missing = done_samples, summary.units - done_units
        summary.warnings.append(summary.partial_note() or "")
        return "budget-limited"

    async def execute_items(self, run_id, built: dict, items, ledger, summary: RunSummary, batches=None) -> None:
        """Process ``items`` (until the budget stops the session) and store the results before returning.

        ``items`` may be async (a sequential run's, which stops itself at the budget); ``batches`` is told of
        every result (``seen(results)``: True when the results complete a batch, which is then stored at once)
        and of each write that followed (``stored()``) (:class:`ragassay.engine.sequential.pipeline.Batches`)."""
        todo = items if hasattr(items, "__aiter__") else _until_stopped(items, ledger)
        await self._execute(run_id, built, todo, summary, batches)

    async def _execute(self, run_id: str, built: dict, todo, summary: RunSummary, batches=None) -> None:
        if hasattr(self.executor, "process"):  # a distributed executor: workers build their own processors
            stream = self.executor.process(self._worker_job(run_id, built), self._with_inputs(todo))
        else:
            processor = UnitProcessor(self.scorers, built, self.repeats, no_answer_reasons(self.plan.systems))
            stream = self._local_batches(processor, todo)
        buffer = WriteBuffer(lambda results: self.store.write_units(run_id, results, self.write_context))
        # a store that settles results into rows: the buffer holds rows, the outputs and values are freed at once
        settle = self.store.settle_units if isinstance(self.store, SettlingWriter) else None
        try:
            async with contextlib.aclosing(with_quiet_writes(stream, buffer)) as items:  # ragassay.engine.flushing
                async for results, stored in items:
                    for result in results:
                        digest_ = result if isinstance(result, UnitDigest) else UnitDigest.of(result)
                        self._count(summary, digest_)
                        self.on_result(result if isinstance(result, UnitResult) else digest_.as_result())
                    if not stored:
                        buffer.add(settle(results, self.write_context) if settle else results)
                    due = batches is not None and batches.seen(results)
                    if due or buffer.required():
                        buffer.flush()
                        if due:
                            batches.stored()
        finally:
            buffer.flush()

    async def _local_batches(self, processor: UnitProcessor, todo: Iterable[WorkItem]):
        """Results of the local executor, item by item, as (results, already stored) pairs."""
        async for results in self.executor.map(lambda item: processor.process(item, self.inputs(item)), todo):
            yield results, False

    def _with_inputs(self, todo: Iterable[WorkItem]):
        """(slim item, its stored inputs) pairs, read from the store as the executor pulls them."""
        for item in todo:
            yield slim(item), self.inputs(item)

    def _worker_job(self, run_id: str, built: dict) -> WorkerJob:
        """What each worker needs to build its own processor (the systems that have work, once per key)."""
        by_rag: dict[int, str] = {}
        systems, aliases, failed = [], {}, {}
        for system in self.plan.systems:
            rag = built.get(system.name)
            if rag is None:
                continue
            if isinstance(rag, Exception):
                failed[system.name] = describe(rag)
            elif id(rag) in by_rag:
                aliases[system.name] = by_rag[id(rag)]
            else:
                by_rag[id(rag)] = system.name
                systems.append(system)
        return WorkerJob(
            systems,
            aliases,
            failed,
            self.plan.metrics,
            self.plan.judges,
            dataclasses.replace(self.plan.context, warnings=[]),
            repeats=self.repeats,
            concurrency=self.plan.loaded.config.project.concurrency,
            run_id=run_id,
            store_url=self.store.worker_url,  # the executor decides whether workers write
            store_retry_s=self.plan.loaded.config.project.results_retry_s,
            write_context=self.write_context,
            corpus=self.plan.corpus,
            no_answer=no_answer_reasons(self.plan.systems),
        )

    def _build_or_fail(self, run_id: str, resumed: bool, names: set[str]) -> dict[str, RAGSystem | Exception]:
        """:meth:`_build_systems`; a configuration or data error there (a replayed file that does not validate)
        stops the session. A run created by this session with nothing stored is then recorded as ``failed``
        (with the error among its warnings), never left looking like an interrupted run that a re-run resumes."""
        try:
            return self._build_systems(names)
        except RagassayError as exc:
            if not resumed and not self.store.has_outputs(run_id):
                self.store.finish_run(run_id, FAILED, [*self.plan.warnings, f"failed before any work: {exc}"])
            raise

    def _build_systems(self, names: set[str]) -> dict[str, RAGSystem | Exception]:
        """Build and prepare each system that has work; a failure fails that system's units, not the run."""
        built: dict[str, RAGSystem | Exception] = {}
        prepared: dict[str, str] = {}  # system key -> name of the system built for it
        context = self.plan.context
        todo = [s for s in self.plan.systems if s.name in names]
        total = len({self.system_keys[s.name] for s in todo})
        for system in todo:
            key = self.system_keys[system.name]
            if key in prepared:  # the same spec as a system already built: its work is done once
                built[system.name] = built[prepared[key]]
                continue
            context.progress("building systems", len(prepared), total, "systems", note=system.name)
            try:
                rag = build_system(system, self.plan.context)
                rag.prepare(self.plan.corpus)
                built[system.name] = rag
            except RagassayError:
                raise
            except Exception as exc:  # noqa: BLE001 - recorded per unit
                built[system.name] = exc
            prepared[key] = system.name
        if total:
            context.progress("building systems", total, total, "systems")
        return built

    def inputs(self, item: WorkItem) -> ItemInputs:
        """What the store holds for ``item`` (read on the driver; processing needs no database)."""
        own = next((unit for _, unit in item.units if unit is not None and unit.status == "ok"), None)
        source_id = own.output_id if own is not None else item.reusable
        if source_id is None:
            return ItemInputs()
        inputs = ItemInputs(self.store.load_output(source_id), source_id, own)
        if own is None:
            inputs.reuse = self.store.reusable_values(source_id, self.write_context)
        if self.scorers.needs_stored_values(own.metrics if own is not None else set()):
            inputs.known = self.store.metric_values(source_id)
        labels = self.scorers.labels | {f"judge:{label}" for label in self.scorers.judge_labels}
        shared = {pair for pair in stored_pairs(own) if pair[0] in labels}
        if any(
            shared - (stored_pairs(unit) if unit is not None and unit.status == "ok" else set())
            for _, unit in item.units
        ):
            inputs.stored_metrics = self.store.metric_value_models(source_id)
            inputs.stored_judgements = self.store.judgement_models(source_id)
        return inputs

    def _count(self, summary: RunSummary, result: UnitDigest) -> None:
        summary.completed += 1
        summary.reused += result.reused
        if result.status == "failed":
            summary.failed += 1
            summary.failures.append((result.system, result.question_id, result.error or ""))
        elif result.empty_retrieval:
            summary.empty_retrievals[result.system] = summary.empty_retrievals.get(result.system, 0) + 1
        summary.metric_errors += result.metric_errors


def _sequential_plan(plan: RunPlan, settings: SequentialSettings | bool, baseline: str | None):
    """The :class:`~ragassay.engine.sequential.plan.SequentialPlan` of a sequential run (imported here: its statistics
    import numpy, which a full run does not need before its first call)."""
    from .sequential.plan import SequentialPlan

    return SequentialPlan.of(plan, settings, baseline)


def _until_stopped(items: Iterable[WorkItem], ledger: BudgetLedger | None) -> Iterator[WorkItem]:
    """``items`` until the budget stops the session (no new work starts after that)."""
    for item in items:
        if ledger is not None and ledger.check_time() is not None:
            return
        yield item


def _own_pairs(unit: StoredUnit | None) -> set[tuple[str, int]]:
    """What a unit already has stored with its own ok output (nothing for a failed or new unit)."""
    return stored_pairs(unit) if unit is not None and unit.status == "ok" else set()


def _empty_retrieval_warnings(summary: RunSummary, built: dict[str, Any]) -> list[str]:
    """Systems that returned no context for some samples (while deciding to retrieve), but those whose purpose
    includes it (:attr:`RAGSystem.empties_contexts`)."""
    return [
        f"{system}: {count} output(s) came back with no retrieved context (check the retriever and the corpus)"
        for system, count in sorted(summary.empty_retrievals.items())
        if not getattr(built.get(system), "empties_contexts", False)
    ]
