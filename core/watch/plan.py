"""What a watch scores with, resolved from the project before anything runs: the ``trace_replay`` system (answers
each trace with what it recorded), the watched metrics and judges (``[watch]``, else ``[evaluation]``), the mapping
of the project's ``traces`` source, and the identity of each watched column (the digest of its component's resolved
spec: a changed judge is a changed identity, :mod:`ragassay.watch.recalibration`)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from typing import Any

from ..components import ComponentContext, Corpus
from ..config import LoadedConfig
from ..config.watch import WatchSection
from ..engine.processing import UnitProcessor
from ..engine.project import Project
from ..engine.scoring import Scorers
from ..engine.systems import ResolvedComponent, ResolvedSystem, build_system, resolve_component, with_compat
from ..errors import ConfigError
from ..refs import ComponentRef
from ..store.units import WriteContext
from ..traces.mapping import TraceMapping, dataset_mapping
from .detect import Watched

SYSTEM = "production"  # the one system of a watch run: trace_replay
REPLAY = "trace_replay"


def digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class WatchPlan:
    """A watch's components, resolved (see the module docstring)."""

    loaded: LoadedConfig
    rules: WatchSection
    system: ResolvedSystem
    metrics: list[tuple[str, ResolvedComponent]]
    judges: list[tuple[str, ResolvedComponent]]
    context: ComponentContext
    mapping: TraceMapping

    @classmethod
    def of(cls, project: Project, rules: WatchSection | None = None) -> WatchPlan:
        """Resolve the watch of ``project`` under ``rules`` (default: its ``[watch]``); errors name the key."""
        loaded, registry = project.loaded, project.registry
        rules = rules or loaded.config.watch
        evaluation = loaded.config.evaluation
        metric_refs = rules.metrics if rules.metrics is not None else evaluation.metrics
        judge_refs = rules.judges if rules.judges is not None else evaluation.judges
        base = "watch" if rules.metrics is not None else "evaluation"
        metrics = [
            (ref.key, resolve_component(registry, "metric", with_compat(ref, registry, evaluation.compat), loaded, k))
            for ref, k in ((r, f"{base}.metrics[{i}]") for i, r in enumerate(metric_refs))
        ]
        jbase = "watch" if rules.judges is not None else "evaluation"
        judges = [
            (ref.key, resolve_component(registry, "judge", ref, loaded, f"{jbase}.judges[{i}]"))
            for i, ref in enumerate(judge_refs)
        ]
        if not metrics and not judges:
            raise ConfigError(f"{loaded.where('watch.metrics')}: nothing to watch: list at least one metric or judge")
        dataset = loaded.config.dataset
        mapping = dataset_mapping(dataset.source, dataset.options, loaded.where("dataset.options.mapping"))
        rag = resolve_component(registry, "rag", ComponentRef(name=REPLAY), loaded, "watch")
        plan = cls(loaded, rules, ResolvedSystem(SYSTEM, rag, {}), metrics, judges, project.context, mapping)
        plan.watched()  # every column bounded, before anything starts
        return plan

    def spec(self) -> dict[str, Any]:
        """The run's resolved spec, as a run stores it, with the rules in effect under ``watch``."""
        return {
            "systems": [self.system.spec().model_dump(mode="json")],
            "metrics": {label: m.spec().model_dump(mode="json") for label, m in self.metrics},
            "judges": {label: j.spec().model_dump(mode="json") for label, j in self.judges},
            "watch": self.rules.model_dump(mode="json"),
        }

    def fingerprint(self) -> str:
        """One watch run per project and watch name: its fingerprint names them, not the components (a changed
        judge goes on in the same run: :mod:`ragassay.watch.recalibration`)."""
        return digest(json.dumps({"watch": self.rules.name, "project": self.loaded.config.project.name}))

    def identities(self) -> dict[str, str]:
        """column -> the digest of its component's resolved spec."""
        found = {label: digest(m.spec().model_dump_json()) for label, m in self.metrics}
        found.update({f"judge:{label}": digest(j.spec().model_dump_json()) for label, j in self.judges})
        return found

    def columns(self) -> list[str]:
        return [label for label, _ in self.metrics] + [f"judge:{label}" for label, _ in self.judges]

    def watched(self) -> list[Watched]:
        """Every column with its direction and (bounded) value range; a ConfigError for an open range."""
        found = []
        for label, metric in self.metrics:
            traits = metric.spec().traits
            low, high = traits.get("value_range", [None, None])
            if low is None or high is None:
                raise ConfigError(
                    f"{self.loaded.where('watch.metrics')}: metric '{label}' has an open value range "
                    f"[{low}, {high}]; change detection needs a bounded metric (drop it from [watch] metrics)"
                )
            found.append(Watched(label, traits.get("direction", "higher"), (float(low), float(high))))
        found += [Watched(f"judge:{label}", "higher", (0.0, 1.0)) for label, _ in self.judges]
        return found

    def write_context(self) -> WriteContext:
        from ..llm.pricing import PriceTable

        return WriteContext(
            prices=PriceTable(self.loaded.config.llm.prices),
            metric_keys={label: digest(m.spec().model_dump_json()) for label, m in self.metrics},
            judge_keys={label: digest(j.spec().model_dump_json()) for label, j in self.judges},
        )

    def system_key(self) -> str:
        spec = self.system.spec().model_dump(mode="json")
        spec.pop("name")
        return digest(json.dumps({"system": spec, "corpus": Corpus([]).content_hash()}, sort_keys=True))

    def processor(self, only: set[str] | None = None) -> UnitProcessor:
        """The ordinary unit processor over the built system and scorers (``only``: these columns)."""
        rag = build_system(self.system, self.context)
        rag.prepare(Corpus([]))
        metrics = [(label, m.build(self.context)) for label, m in self.metrics if only is None or label in only]
        judges = [
            (label, j.build(self.context)) for label, j in self.judges if only is None or f"judge:{label}" in only
        ]
        return UnitProcessor(Scorers.ordered(metrics, judges), {SYSTEM: rag})

    def create_run(self, store: Any, fingerprint: str, spec: dict[str, Any], samples: list, description: str) -> str:
        """Create a run of this watch's system in ``store`` (with ``spec`` and the ``samples`` it scores) and return
        its new id: the watch run itself, or a judge's calibration run."""
        from .. import __version__

        run_id = hashlib.sha256(f"{fingerprint}{time.time_ns()}".encode()).hexdigest()[:16]
        config = self.loaded.config
        record = {
            "id": run_id,
            "fingerprint": fingerprint,
            "project": config.project.name,
            "config_path": str(self.loaded.path),
            "config_json": config.model_dump_json(),
            "spec_json": json.dumps(spec),
            "ragassay_version": __version__,
            "sample_count": len(samples),
            "description": description,
            "warnings_json": "[]",
        }
        store.create_run(record, [(SYSTEM, self.system.spec().model_dump_json())], samples)
        return run_id
