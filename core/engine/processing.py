"""Processing one work item: answer (or take a stored output), score, and give each unit its rows.

The runner splits its work in two so that the second half can run anywhere:

- :meth:`Runner.inputs <ragassay.engine.runner.Runner.inputs>` reads what the store already holds for an item (its own
  output when only metrics are missing, an earlier run's output to reuse, values to copy): driver side;
- :class:`UnitProcessor` computes the rest with built systems, metrics and judges and touches no database: in
  this process (:class:`~ragassay.engine.executor.LocalExecutor`) or in a worker process of a cluster
  (:mod:`ragassay.engine.ray_executor`), where it is built once per worker.

Both halves exchange plain picklable data: :class:`WorkItem`, :class:`ItemInputs`, and
:class:`~ragassay.store.units.UnitResult` lists.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from ..components import RAGSystem
from ..errors import RagassayError
from ..llm.budget import BudgetExhausted
from ..models import Judgement, MetricValue, RAGOutput, Sample
from ..store.units import StoredUnit, UnitResult
from .scoring import Scorers, describe


@dataclasses.dataclass
class WorkItem:
    """Units (system, sample) that share one output: the same system spec on the same sample."""

    sample: Sample
    sample_key: str
    system_key: str
    units: list[tuple[Any, StoredUnit | None]]  # (ResolvedSystem, what is stored for the unit)
    reusable: int | None = None  # id of an output of an earlier run with the same keys

    def system_names(self) -> list[str]:
        return [system.name for system, _ in self.units]


@dataclasses.dataclass
class ItemInputs:
    """What the store holds for a work item, read before it is processed.

    ``output`` is None for an item to answer afresh. Otherwise it is the stored output the item's units share:
    the item's own (``source`` set: only missing metrics and judges are computed) or an earlier run's
    (``source`` None: values of metrics and judges with the same spec are taken from ``reuse``).
    """

    output: RAGOutput | None = None
    source_id: int | None = None
    source: StoredUnit | None = None
    reuse: dict[str, MetricValue | Judgement] = dataclasses.field(default_factory=dict)
    known: dict[str, float | None] = dataclasses.field(default_factory=dict)
    stored_metrics: list[MetricValue] = dataclasses.field(default_factory=list)
    stored_judgements: list[Judgement] = dataclasses.field(default_factory=list)


class UnitProcessor:
    """Turns a work item and its stored inputs into unit results (no database access).

    ``systems`` maps a system name to its built and prepared :class:`~ragassay.RAGSystem`, or to the exception
    its preparation raised (or that exception already described): that system's units fail with the reason, the
    run goes on.
    """

    def __init__(
        self,
        scorers: Scorers,
        systems: dict[str, RAGSystem | Exception | str],
        repeats: int = 1,
        no_answer: dict[str, str] | None = None,
    ):
        self.scorers = scorers
        self.systems = systems
        self.repeats = repeats
        self.no_answer = no_answer or {}  # system name -> why its outputs have no answer (see no_answer_reasons)

    async def process(self, item: WorkItem, inputs: ItemInputs) -> list[UnitResult]:
        """One shared output for every unit of ``item``: stored, reused from an earlier run, or answered."""
        if inputs.output is not None:
            return await self._score_units(item, inputs.output, inputs)
        first = item.units[0][0]
        rag = self.systems.get(first.name)
        if rag is None or isinstance(rag, (Exception, str)):
            return self._failed(item, _not_built(rag))
        start = time.perf_counter()
        try:
            output = await rag.answer(item.sample)
        except BudgetExhausted:
            return []  # the budget refused a call: nothing is stored, a resume answers it
        except Exception as exc:  # noqa: BLE001 - a component error fails this sample only
            return self._failed(item, describe(exc))
        if output.latency_s is None or not getattr(rag, "replays", False):
            output.latency_s = time.perf_counter() - start  # a replay keeps the latency it recorded
        return await self._score_units(item, output, inputs)

    def _failed(self, item: WorkItem, error: str) -> list[UnitResult]:
        return [
            UnitResult(
                system.name,
                item.sample.question_id,
                "failed",
                error=error,
                replaces=unit.output_id if unit is not None else None,
                system_key=item.system_key,
                sample_key=item.sample_key,
            )
            for system, unit in item.units
        ]

    async def _score_units(self, item: WorkItem, output: RAGOutput, inputs: ItemInputs) -> list[UnitResult]:
        """Score the shared output once and give each unit its rows (new, copied or only the missing values)."""
        source, source_id = inputs.source, inputs.source_id
        metrics, judgements = await self.scorers.score(
            item.sample,
            output,
            skip_metrics=source.metrics if source is not None else set(),
            skip_judges=source.judges if source is not None else set(),
            known=inputs.known,
            reuse=inputs.reuse.get,
            repeats=self.repeats,
            stored_repeats=source.repeats if source is not None else set(),
            calling=source.calling if source is not None else set(),
            no_answer=self.no_answer.get(item.units[0][0].name),
        )
        labels = self.scorers.labels | {f"judge:{label}" for label in self.scorers.judge_labels}
        results = []
        for system, unit in item.units:
            own_ok = unit is not None and unit.status == "ok"
            result = UnitResult(
                system.name,
                item.sample.question_id,
                "ok",
                output,
                output_id=unit.output_id if own_ok else None,
                replaces=unit.output_id if unit is not None and not own_ok else None,
                system_key=item.system_key,
                sample_key=item.sample_key,
                reused_from=None if own_ok else source_id,
            )
            have = stored_pairs(unit) if own_ok else set()
            copied = {p for p in stored_pairs(source) if p[0] in labels} - have  # stored for the shared output
            result.metrics = [m for m in metrics if (m.metric, m.repeat) not in have]
            result.judgements = [j for j in judgements if (f"judge:{j.judge}", j.repeat) not in have]
            if copied:
                result.metrics += [m for m in inputs.stored_metrics if (m.metric, m.repeat) in copied]
                result.judgements += [j for j in inputs.stored_judgements if (f"judge:{j.judge}", j.repeat) in copied]
            results.append(result)
        return results


def no_answer_reasons(systems: list[Any]) -> dict[str, str]:
    """System name -> the reason its outputs have no answer, for the resolved systems whose RAG class declares
    ``answers = False`` (answer-based metrics and judges are stored as unscored with it)."""
    return {
        system.name: f"system '{system.name}' is retrieval-only: it gives no answer"
        for system in systems
        if not system.rag.info.cls.answers
    }


def answer_metric_warnings(
    config: Any, systems: list[Any], metrics: list[tuple[str, Any]], judges: list[tuple[str, Any]]
) -> list[str]:
    """A warning for answer-based metrics and judges configured explicitly on a run with retrieval-only systems
    (the default metrics are unscored there quietly: their reason says why)."""
    answerless = [s.name for s in systems if not s.rag.info.cls.answers]
    explicit = config.evaluation.model_fields_set & {"metrics", "judges"}
    labels = [label for label, m in metrics if "metrics" in explicit and m.info.cls.uses_answer]
    labels += [f"judge:{label}" for label, j in judges if j.info.cls.uses_answer]
    if not answerless or not labels:
        return []
    return [
        f"[evaluation]: {', '.join(labels)} read{'s' if len(labels) == 1 else ''} the answer, and system(s) "
        f"{', '.join(answerless)} give none (retrieval-only): their values will be unscored for "
        f"{'it' if len(answerless) == 1 else 'them'}"
    ]


def _not_built(rag: Exception | str | None) -> str:
    if rag is None:
        return "not built"
    return f"system preparation failed: {rag if isinstance(rag, str) else describe(rag)}"


@dataclasses.dataclass
class UnitDigest:
    """What the driver counts of a unit result (all it gets back when workers write results themselves)."""

    system: str
    question_id: str
    status: str
    error: str | None = None
    reused: bool = False
    empty_retrieval: bool = False
    metric_errors: int = 0

    @classmethod
    def of(cls, result: UnitResult) -> UnitDigest:
        output = result.output
        return cls(
            result.system,
            result.question_id,
            result.status,
            result.error,
            result.reused_from is not None,
            result.status == "ok"
            and output is not None
            and output.retrieved is not False
            and not any(c.strip() for c in output.contexts),
            sum(1 for m in result.metrics if (m.unscored_reason or "").startswith("error:")),
        )

    def as_result(self) -> UnitResult:
        """A payload-free :class:`UnitResult` (system, question id, status, error) for ``on_result`` callbacks."""
        return UnitResult(self.system, self.question_id, self.status, error=self.error)


@dataclasses.dataclass
class WorkerJob:
    """How a worker process builds its :class:`UnitProcessor` (picklable: sent once to every worker).

    ``systems`` are the distinct systems to build (one per system key), ``aliases`` the names of the other
    systems with the same key, ``failed`` the systems whose preparation failed on the driver (name -> reason).
    With ``store_url`` set, workers write their results to that database themselves (PostgreSQL), retrying
    transient database errors for ``store_retry_s`` seconds (``[project] results_retry_s``), as the driver does.
    """

    systems: list[Any]  # ResolvedSystem
    aliases: dict[str, str]
    failed: dict[str, str]
    metrics: list[tuple[str, Any]]  # (label, ResolvedComponent)
    judges: list[tuple[str, Any]]
    context: Any  # ComponentContext
    repeats: int = 1
    concurrency: int = 8
    run_id: str = ""
    store_url: str | None = None
    store_retry_s: float = 60.0
    write_context: Any = None  # WriteContext
    corpus: Any = None  # the driver's Corpus (the executor ships it once, not inside every job copy)
    no_answer: dict[str, str] = dataclasses.field(default_factory=dict)  # see no_answer_reasons

    def build(self, corpus: Any) -> UnitProcessor:
        """Build the systems (prepared over ``corpus``), metrics and judges, once."""
        from .systems import build_system

        built: dict[str, RAGSystem | Exception | str] = dict(self.failed)
        for system in self.systems:
            try:
                rag = build_system(system, self.context)
                rag.prepare(corpus)
                built[system.name] = rag
            except RagassayError:
                raise  # bad configuration: the worker does not start, the driver reports it
            except Exception as exc:  # noqa: BLE001 - recorded per unit, as on the driver
                built[system.name] = describe(exc)
        for name, same in self.aliases.items():
            built[name] = built[same]
        scorers = Scorers.ordered(
            [(label, m.build(self.context)) for label, m in self.metrics],
            [(label, j.build(self.context)) for label, j in self.judges],
        )
        return UnitProcessor(scorers, built, self.repeats, self.no_answer)


@dataclasses.dataclass(frozen=True)
class SystemName:
    """A system named in a work item sent to a worker (the worker has the resolved system already)."""

    name: str


def slim(item: WorkItem) -> WorkItem:
    """``item`` with its systems replaced by their names: what a worker needs, a fraction of the bytes."""
    return dataclasses.replace(item, units=[(SystemName(system.name), unit) for system, unit in item.units])


def stored_pairs(unit: StoredUnit | None) -> set[tuple[str, int]]:
    """(label, repeat) of every value stored for a unit (judges as ``judge:<label>``)."""
    if unit is None:
        return set()
    return {(m, 0) for m in unit.metrics} | {(f"judge:{j}", 0) for j in unit.judges} | unit.repeats
