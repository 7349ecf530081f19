"""Checking the dataset against what the listed metrics and judges need, before any call is paid.

Every metric and judge may declare the inputs it needs (``requires``, names of :data:`ragassay.models.INPUTS`).
The inputs a sample can lack (its reference answers, reference contexts, reference context ids, relevance
judgements, group) are counted while the plan spools the samples (:class:`InputCounts`: counts and three
example question ids per input, whatever the dataset's size). Then, for every metric listed in ``[evaluation]
metrics`` and every judge in ``[evaluation] judges``:

* **no** sample has an input it needs: a :class:`~ragassay.errors.ConfigError` (exit code 2) naming the metric,
  the input and the dataset, before any system runs and before anything is stored;
* **some** samples lack it: a warning stored with the run (``... will be unscored on N of M samples: no
  reference_answers``), and the run goes on.

The default metrics (``[evaluation] metrics`` not set) are not checked: they are unscored with the reason where
a sample lacks an input, as before. What a system returns (the answer, the retrieved contexts, its trace) is known
only after it ran, so those inputs are not checked here; the one thing known before is a system that declares it
never retrieves (``RAGSystem.retrieval = "never"``): when every system of the run does, listed metrics and judges
that need the retrieved contexts get a warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from ..models import INPUTS, Sample, checked_inputs
from .project import Project
from .spool import SampleSpool
from .systems import ResolvedComponent

EXAMPLES = 3  # question ids kept per input, to show which samples lack it
RETRIEVED = ("contexts", "context_ids", "context_document_ids")


@dataclasses.dataclass(frozen=True)
class Listed:
    """A metric or judge of ``[evaluation]`` with what it needs: its label, where it is configured, its inputs."""

    label: str  # as the run stores it: the metric's label, 'judge:LABEL' for a judge
    kind: str
    key_path: str  # e.g. 'evaluation.metrics[2]'
    component: ResolvedComponent
    inputs: frozenset[str]

    @property
    def zero_when_missing(self) -> bool:
        """Whether the metric scores 0 where an input is missing instead of unscored (Unitxt's values)."""
        options = self.component.options
        return "unitxt" in (getattr(options, "compat", None), getattr(options, "variant", None))


def listed_components(
    config: Any, metrics: list[tuple[str, ResolvedComponent]], judges: list[tuple[str, ResolvedComponent]]
) -> list[Listed]:
    """The metrics and judges to check: the judges, and the metrics when ``[evaluation] metrics`` is set."""
    found = []
    if "metrics" in config.evaluation.model_fields_set:
        for index, (label, metric) in enumerate(metrics):
            inputs = frozenset(metric.info.cls.required(metric.options))
            found.append(Listed(label, "metric", f"evaluation.metrics[{index}]", metric, inputs))
    for index, (label, judge) in enumerate(judges):
        inputs = frozenset(judge.info.cls.required(judge.options))
        found.append(Listed(f"judge:{label}", "judge", f"evaluation.judges[{index}]", judge, inputs))
    return [listed for listed in found if listed.inputs]


class InputCounts:
    """How many samples have each input, counted as the samples stream by (:meth:`observe`); memory is flat."""

    def __init__(self, names: Iterable[str]):
        self.names = checked_inputs(names)
        self.samples = 0
        self.have = dict.fromkeys(self.names, 0)
        self.lacking: dict[str, list[str]] = {name: [] for name in self.names}  # the first question ids

    def observe(self, sample: Sample) -> None:
        self.samples += 1
        for name in self.names:
            if INPUTS[name].present(sample):
                self.have[name] += 1
            elif len(self.lacking[name]) < EXAMPLES:
                self.lacking[name].append(sample.question_id)


def requirement_warnings(counts: InputCounts, listed: list[Listed], loaded: Any) -> list[str]:
    """Warnings for inputs some samples lack; raises :class:`ConfigError` for an input no sample has."""
    if not counts.samples:
        return []  # an empty dataset is reported where it is read
    for item in listed:
        for name in checked_inputs(item.inputs):
            if not counts.have[name]:
                raise ConfigError(_refusal(item, name, counts.samples, loaded))
    groups: dict[tuple[str, bool], list[str]] = {}
    for item in listed:
        for name in checked_inputs(item.inputs):
            if counts.have[name] < counts.samples:
                groups.setdefault((name, item.zero_when_missing), []).append(item.label)
    return [_partial(labels, name, zero, counts) for (name, zero), labels in groups.items()]


def _refusal(item: Listed, name: str, samples: int, loaded: Any) -> str:
    dataset = loaded.config.dataset
    path = dataset.options.get("path")
    source = f"[dataset] source '{dataset.source}'" + (f", path {path!r}" if isinstance(path, str) else "")
    section = "metrics" if item.kind == "metric" else "judges"
    name_ = item.component.info.name
    return (
        f"{loaded.where(item.key_path)}: {item.kind} '{name_}' needs {name}, and none of the dataset's {samples} "
        f"samples has any ({source}): add {name} to the samples, or remove '{name_}' from [evaluation] {section}"
    )


def _partial(labels: list[str], name: str, zero: bool, counts: InputCounts) -> str:
    lacking = counts.samples - counts.have[name]
    examples = ", ".join(repr(qid) for qid in counts.lacking[name])
    outcome = 'score 0 (compat = "unitxt")' if zero else "be unscored"
    return (
        f"[evaluation]: {', '.join(labels)} will {outcome} on {lacking} of {counts.samples} samples: no {name} "
        f"(e.g. {examples})"
    )


def retrieval_warnings(systems: list[Any], listed: list[Listed]) -> list[str]:
    """A warning when every system declares it never retrieves and listed components need retrieved contexts."""
    if not systems or any(s.rag.info.cls.retrieval != "never" for s in systems):
        return []
    labels = [item.label for item in listed if item.inputs.intersection(RETRIEVED)]
    if not labels:
        return []
    return [
        f"[evaluation]: {', '.join(labels)} need{'s' if len(labels) == 1 else ''} the retrieved contexts, and "
        f"every system ({', '.join(s.name for s in systems)}) declares it never retrieves: no output will have any"
    ]


@dataclasses.dataclass
class Seen:
    """What the plan learns of the samples while it spools them: the distinct reference context ids (for
    :func:`ragassay.engine.reference_check.reference_warnings`), and the warnings about inputs of the listed
    metrics and judges that some samples lack."""

    referenced: set[str]
    warnings: list[str]


def spool_samples(project: Project, listed: list[Listed]) -> tuple[SampleSpool, Seen]:
    """The project's samples spooled in one pass, with what :class:`Seen` collects on the way; a
    :class:`ConfigError` (the spool closed) when a listed metric or judge needs an input no sample has."""
    referenced: set[str] = set()
    counts = InputCounts(name for item in listed for name in item.inputs)

    def observe(sample: Sample) -> None:
        referenced.update(sample.reference_context_ids)
        counts.observe(sample)

    samples = SampleSpool.write(project.samples(), observe=observe)
    try:
        warnings = requirement_warnings(counts, listed, project.loaded)
    except ConfigError:
        samples.close()
        raise
    return samples, Seen(referenced, warnings)
