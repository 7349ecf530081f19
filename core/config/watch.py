"""``[watch]``: the standing rules of ``ragassay watch`` (docs/watch.md): which traces, which metrics and judges,
the judge budget per hour and per day, the reference each metric is watched against, the change detection's
alpha and version keys, and where alarms go. ``ragassay watch`` options override single keys.

The options live here (the config imports them); the watch itself is :mod:`ragassay.watch`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..refs import ComponentRef


class WatchBudget(BaseModel):
    """The most the watch's metrics and judges may spend on model calls, over any rolling hour and day."""

    model_config = ConfigDict(extra="forbid")

    calls_per_hour: int | None = Field(None, ge=0, description="Most model calls in any 60 minutes.")
    calls_per_day: int | None = Field(None, ge=0, description="Most model calls in any 24 hours.")
    usd_per_hour: float | None = Field(None, ge=0, description="Most US dollars (at [llm.prices]) in any 60 minutes.")
    usd_per_day: float | None = Field(None, ge=0, description="Most US dollars (at [llm.prices]) in any 24 hours.")

    def is_set(self) -> bool:
        """Whether any limit is given."""
        return any(value is not None for value in self.model_dump().values())

    def describe(self) -> str:
        """``calls_per_hour=100, usd_per_day=5`` (the limits that are set), or ``none``."""
        return ", ".join(f"{k}={v:g}" for k, v in self.model_dump().items() if v is not None) or "none"


class WatchReference(BaseModel):
    """What each watched metric is compared with: a stored run's mean (``run``), the stored traces of a time
    window scored by the watch itself (``since`` and ``until``), or a fixed ``target`` per metric; with a
    ``margin`` (in the metric's units) a change smaller than it is no alarm."""

    model_config = ConfigDict(extra="forbid")

    run: str | None = Field(None, description="A stored run id (or unique prefix): each metric's mean over it.")
    system: str | None = Field(None, description="With 'run': the system of that run (default: its first).")
    since: str | None = Field(None, description="Start of a window of stored traces (ISO 8601, UTC).")
    until: str | None = Field(None, description="End of that window (ISO 8601, UTC), exclusive.")
    target: dict[str, float] = Field(
        default_factory=dict, description="A fixed value per metric label (judges as judge:LABEL)."
    )
    margin: float = Field(0.0, ge=0, description="The change, in the metric's units, that is still no alarm.")

    @model_validator(mode="after")
    def _one_kind(self) -> WatchReference:
        kinds = [
            name for name, given in (("run", self.run), ("since/until", self.since), ("target", self.target)) if given
        ]
        if self.until and not self.since:
            raise ValueError("'until' needs 'since': the window is [since, until)")
        if len(kinds) != 1:
            raise ValueError(
                f"give exactly one of run, since/until and target (got {', '.join(kinds) or 'none'}), e.g. "
                'reference = { run = "3f2a9c" } or { since = "2025-03-01", until = "2025-03-08" } or '
                "{ target = { k_precision = 0.9 }, margin = 0.05 }"
            )
        if self.system and not self.run:
            raise ValueError("'system' goes with 'run' only")
        return self

    @property
    def kind(self) -> str:
        """``run``, ``window`` or ``target``."""
        return "run" if self.run else "window" if self.since else "target"


class WatchSinks(BaseModel):
    """Where an alarm goes besides the store: a line on stderr, a JSON line in a file, a webhook, an OTLP event."""

    model_config = ConfigDict(extra="forbid")

    stderr: bool = Field(True, description="Print each alarm as one line on stderr.")
    jsonl: str | None = Field(None, description="Append each alarm as one JSON line to this file (relative: project).")
    webhook: str | None = Field(None, description="POST each alarm as JSON to this http(s) URL.")
    webhook_timeout_s: float = Field(5.0, gt=0, le=120, description="Seconds one webhook POST may take.")
    webhook_retries: int = Field(
        3, ge=0, le=10, description="Retries of a failed webhook POST (backoff 0.5 s, doubling)."
    )
    otlp: bool = Field(
        True, description="Send each alarm as a ragassay.watch.alarm event to [watch] otlp, when that is set."
    )

    @field_validator("webhook")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"webhook must be an http:// or https:// URL, got {value!r}")
        return value


class WatchSection(BaseModel):
    """``[watch]``: the standing rules of ``ragassay watch``."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        "watch", description="The watch's name: one watch run per name in the results store, resumed on restart."
    )
    metrics: list[ComponentRef] | None = Field(
        None, description="Metrics to watch (names or tables with options); default: [evaluation] metrics."
    )
    judges: list[ComponentRef] | None = Field(None, description="Judges to watch; default: [evaluation] judges.")
    sample: str | float | None = Field(
        None, description="Watch a subset: '5%' or 0.05 by a hash of the trace id (as the traces source's sample)."
    )
    where: dict[str, str | list[str]] = Field(
        default_factory=dict,
        description="Filters: a mapped field (model, service.name, service.version, session.id) or a resource or "
        "span attribute -> value or list of values (as the traces source's where; since/until are not taken).",
    )
    quiet_s: float = Field(
        2.0,
        ge=0,
        le=3600,
        description="A trace is complete when its root span is stored and no span came for this long.",
    )
    poll_s: float = Field(0.5, gt=0, le=60, description="Seconds between two looks at the store for complete traces.")
    batch: int = Field(64, ge=1, le=10_000, description="Most traces scored and committed together.")
    alpha: float = Field(
        0.05, gt=0, lt=1, description="Bound on the probability that a metric ever raises a false alarm."
    )
    version_keys: list[str] = Field(
        default_factory=lambda: ["service.version"],
        description="Attributes whose values an alarm names (a changed deployment is the first suspect).",
    )
    budget: WatchBudget = Field(default_factory=WatchBudget, description="The judge budget per hour and per day.")
    reference: WatchReference | None = Field(
        None, description="What each metric is compared with (run, since/until, or target with margin)."
    )
    calibration: int = Field(
        50, ge=1, le=100_000, description="When a judge changes: the last K traces the old judge scored are re-scored."
    )
    otlp: str | None = Field(
        None, description="OTLP/HTTP endpoint: each evaluation goes out as a gen_ai.evaluation.result event."
    )
    otlp_headers: dict[str, str] = Field(default_factory=dict, description="Headers sent to the OTLP endpoint.")
    sinks: WatchSinks = Field(default_factory=WatchSinks, description="Where alarms go.")

    @field_validator("where")
    @classmethod
    def _no_window(cls, where: dict[str, Any]) -> dict[str, Any]:
        if "since" in where or "until" in where:
            raise ValueError("where since/until do not apply to a watch (it takes traces as they arrive)")
        return where

    @field_validator("version_keys")
    @classmethod
    def _some_keys(cls, keys: list[str]) -> list[str]:
        if any(not key.strip() for key in keys):
            raise ValueError("a version key is empty")
        return keys
