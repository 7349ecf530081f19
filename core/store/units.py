"""What a run hands the results store and reads back from it, per unit: plain data, without SQLAlchemy.

The runner, the work stream and the unit processor use these without importing SQLAlchemy (the store's
implementation is imported when a store is opened).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..models import Judgement, MetricValue, RAGOutput


@dataclasses.dataclass
class UnitResult:
    """Everything produced for one (system, sample): written in one transaction."""

    system: str
    question_id: str
    status: str  # ok | failed
    output: RAGOutput | None = None
    error: str | None = None
    metrics: list[MetricValue] = dataclasses.field(default_factory=list)
    judgements: list[Judgement] = dataclasses.field(default_factory=list)
    output_id: int | None = None  # set when only metrics/judgements are added to a stored output
    replaces: int | None = None  # id of a failed output this result replaces
    system_key: str | None = None  # the resolved system spec (without its name) and the corpus
    sample_key: str | None = None  # the sample as given
    reused_from: int | None = None  # id of the output this one is a copy of
    #: the result's rows, made by a store that settles results before their batch is written
    #: (:class:`~ragassay.store.protocols.SettlingWriter`); ``output``, ``metrics`` and ``judgements`` are then empty
    rows: Any = None


@dataclasses.dataclass
class WriteContext:
    """What the store needs besides the results to write a run's rows: prices (cost columns) and the spec key
    of every metric and judge label (so later runs can reuse the values)."""

    prices: Any
    metric_keys: dict[str, str] = dataclasses.field(default_factory=dict)
    judge_keys: dict[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class StoredUnit:
    """What is already stored for one (system, sample): metric and judge labels of repeat 0; ``repeats``: the
    (label, repeat) pairs of later repeats (judges as ``judge:<label>``); ``calling``: the labels whose repeat-0
    value made model calls (what ``run --repeat N`` repeats)."""

    output_id: int
    status: str
    metrics: set[str]
    judges: set[str]
    repeats: set[tuple[str, int]] = dataclasses.field(default_factory=set)
    calling: set[str] = dataclasses.field(default_factory=set)
