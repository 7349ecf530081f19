"""The ``trace_value`` metric: a value some other evaluator already computed for an output, read from the output's
trace, so stored scores (another tool's per-response metrics, a judge run elsewhere) take part in ragassay's
comparisons, meta-evaluation and label-corrected verdicts without being computed again.

Example: RAGChecker's F1 of each response, replayed by a ``precomputed`` system whose rows carry
``"trace": {"ragchecker_metrics": {"precision": 0.52, "recall": 0.21, "f1": 0.30}}``::

    [evaluation]
    metrics = [
        { name = "trace_value", label = "ragchecker_f1", options = {
            path = ["ragchecker_metrics", "f1"], value_range = [0, 1],
            provenance = "RAGChecker's overall (F1) of the response, baseline_ragchecker.json" } },
    ]

The ``ragchecker`` replay rag (``plugins/ragchecker.py``) keeps RAGChecker's per-result metrics at the same place.
An output whose trace lacks the path, or holds something other than a finite number there, is unscored with the
reason; a value outside ``value_range`` is stored as unscored by the runner, as for every metric.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, RAGOutput, Sample, Unscored, hookimpl


class TraceValueOptions(BaseModel):
    """Options of the trace_value metric."""

    model_config = ConfigDict(extra="forbid")

    path: list[str] = Field(
        min_length=1,
        description="Keys from the top of the output's trace down to the value, e.g. ['ragchecker_metrics', 'f1'].",
    )
    provenance: str = Field(
        min_length=1,
        description="Who computed the value and how (tool, version, file); stored with the run's options and shown "
        "with the metric, since ragassay does not compute it.",
    )
    direction: Literal["higher", "lower"] = Field("higher", description="Whether a higher value is better.")
    value_range: tuple[float | None, float | None] = Field(
        (None, None), description="Inclusive [low, high] of a value; null for an open end."
    )


def read_path(trace: dict[str, Any], path: list[str]) -> float | Unscored:
    """The finite number at ``path`` in ``trace``, or unscored naming the first key that is missing or what was
    found instead of a number."""
    found: Any = trace
    for depth, key in enumerate(path):
        if not isinstance(found, dict) or key not in found:
            where = "trace" + "".join(f"[{k!r}]" for k in path[:depth])
            return Unscored(reason=f"the output's {where} has no key {key!r}")
        found = found[key]
    if isinstance(found, bool) or not isinstance(found, (int, float)) or not math.isfinite(found):
        shown = "trace" + "".join(f"[{k!r}]" for k in path)
        return Unscored(reason=f"the output's {shown} is {found!r}, not a finite number")
    return float(found)


class TraceValue(Metric):
    """A number another evaluator stored in the output's trace, read as is (``options.provenance`` says whose).

    Formula: trace[path[0]][path[1]]... of the output. Source: whoever computed the value (``options.provenance``,
    recorded with the run); ragassay only reads it (docs/metrics.md, "Values computed elsewhere"). Direction and
    range: as configured (default higher is better, unbounded).
    """

    name = "trace_value"
    Options = TraceValueOptions
    requires = frozenset({"trace"})
    uses_answer = False  # the stored value stands whatever the answer says
    formula = "trace[path...]"
    source = "the evaluator named in options.provenance"

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        self.direction = self.options.direction  # per instance: what the runner checks and reports
        self.value_range = tuple(self.options.value_range)

    @classmethod
    def declared(cls, options: TraceValueOptions) -> tuple[str, tuple[float | None, float | None]]:
        return options.direction, tuple(options.value_range)

    def score(self, sample: Sample, output: RAGOutput) -> float | Unscored:
        """The value at ``options.path`` of ``output.trace``."""
        return read_path(output.trace, self.options.path)


@hookimpl
def register_metrics(register):
    """Register the trace_value metric."""
    register(TraceValue)
