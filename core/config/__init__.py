"""Per-project configuration: ``ragassay.toml`` or ``[tool.ragassay]`` in ``pyproject.toml``.

Validated by pydantic. Every error names the file, the key path, the bad value and what is allowed.
See docs/config.md for the reference; ``ragassay init`` writes a commented starter.
"""

from __future__ import annotations

import dataclasses
import difflib
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError
from ..llm.budget import Budget
from ..llm.settings import LLMSection
from ..refs import ComponentRef
from .analysis import AnalysisSection
from .frontier_options import FrontierSettings
from .sequential import LABELLED_NOT_LIVE, SequentialSettings
from .watch import WatchSection

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CONFIG_NAMES = ("ragassay.toml", "pyproject.toml")


class RaySection(BaseModel):
    """[project.ray]: how a run is spread over a Ray cluster (with ``[project] executor = "ray"``)."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = Field(
        default=None,
        description="Cluster address (e.g. 'ray://head:10001' or '10.0.0.5:6379'); default: $RAY_ADDRESS, else a "
        "local cluster started for the run.",
    )
    workers: int = Field(default=2, ge=1, le=4096, description="Worker actors (each builds the systems once).")
    cpus_per_worker: float = Field(default=1.0, gt=0, description="CPUs Ray reserves for each worker.")
    batch_size: int = Field(default=32, ge=1, le=100_000, description="Work items sent to a worker at a time.")
    batches_in_flight: int = Field(
        default=2, ge=1, le=64, description="Batches queued per worker at once (backpressure: bounds driver memory)."
    )
    write: Literal["auto", "driver", "workers"] = Field(
        default="auto",
        description="Who writes results: 'workers' write straight to a server database (PostgreSQL), 'driver' "
        "persists what they stream back; 'auto': workers unless the results database is a SQLite file.",
    )
    max_worker_restarts: int = Field(
        default=3, ge=0, description="Workers replaced after a crash before the run stops (their units are redone)."
    )


class ProjectSection(BaseModel):
    """[project]: where results go and how much runs at once."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="ragassay", description="Project name shown in reports.")
    results: str = Field(
        default="ragassay-results.db",
        description="Results database: a path relative to the config file (SQLite) or any SQLAlchemy URL.",
    )
    results_retry_s: float = Field(
        default=60.0,
        ge=0,
        le=86_400,
        description="How long (seconds) a run, its Ray workers and the commands that read results retry "
        "transient errors of the results database (a lost connection, a server restarting, a locked file) before "
        "they stop with exit code 2 (0: no retries).",
    )
    cache_dir: str = Field(default=".ragassay-cache", description="Folder for caches, relative to the config file.")
    concurrency: int = Field(
        default=8, ge=1, le=4096, description="Samples processed at once (per worker with the Ray executor)."
    )
    executor: Literal["local", "ray"] = Field(
        default="local", description="Where units run: 'local' (this process) or 'ray' (a Ray cluster, [project.ray])."
    )
    ray: RaySection = Field(default_factory=RaySection, description="Ray executor settings.")


class CorpusSection(BaseModel):
    """[corpus]: the documents retrieval runs over: files, and/or a dataset source's documents."""

    model_config = ConfigDict(extra="forbid")

    paths: list[str] = Field(default_factory=list, description="Glob patterns of .txt/.md/.json/.jsonl documents.")
    source: ComponentRef | None = Field(default=None, description="A dataset source whose documents() form the corpus.")
    max_document_bytes: int = Field(
        default=10 * 1024 * 1024,
        ge=1,
        description="A document larger than this many bytes of text (default 10 MiB) gets a warning: every "
        "system holds the corpus in memory; split very large documents.",
    )


class DatasetSection(BaseModel):
    """[dataset]: where the samples come from."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(default="files", description="Dataset source name.")
    options: dict[str, Any] = Field(default_factory=dict, description="Options of the dataset source.")
    limit: int | None = Field(default=None, ge=1, description="Use only the first N samples.")


class SystemSection(BaseModel):
    """[systems.NAME]: one system under evaluation.

    Known keys are below; every other key names a part (role) of the RAG, e.g. ``retriever = "bm25"``.
    """

    model_config = ConfigDict(extra="forbid")

    rag: ComponentRef | None = Field(default=None, description="RAG system component (default 'naive').")
    extends: str | None = Field(default=None, description="Name of a system to start from.")
    description: str = Field(default="", description="Free text shown in reports.")
    options: dict[str, Any] = Field(default_factory=dict, description="Options of the RAG component.")
    parts: dict[str, ComponentRef] = Field(default_factory=dict, description="Parts by role (retriever, ...).")

    @model_validator(mode="before")
    @classmethod
    def _collect_parts(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        known = {"rag", "extends", "description", "options", "parts"}
        parts = dict(value.get("parts", {}))
        parts.update({k: v for k, v in value.items() if k not in known})
        return {**{k: v for k, v in value.items() if k in known}, "parts": parts}


class GridSection(BaseModel):
    """[grid.NAME]: expand a base system over alternatives, one system per combination.

    ``extends`` names the base; each other key is a role (``retriever = ["keyword", "bm25"]``), ``rag``,
    or ``options.FIELD`` (``"options.top_k" = [3, 5]``) with a list of alternatives.
    """

    model_config = ConfigDict(extra="forbid")

    extends: str = Field(description="Base system.")
    axes: dict[str, list[Any]] = Field(default_factory=dict, description="Key -> alternatives.")

    @model_validator(mode="before")
    @classmethod
    def _collect_axes(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        axes = {k: v for k, v in value.items() if k not in ("extends", "axes")}
        return {"extends": value.get("extends"), "axes": {**value.get("axes", {}), **axes}}

    @field_validator("axes")
    @classmethod
    def _non_empty(cls, axes: dict[str, list[Any]]) -> dict[str, list[Any]]:
        if not axes:
            raise ValueError("a grid needs at least one key with a list of alternatives")
        for key, values in axes.items():
            if not values:
                raise ValueError(f"'{key}' has an empty list of alternatives")
        return axes


class EvaluationSection(BaseModel):
    """[evaluation]: the metrics computed on every output and the judges that rule on correctness."""

    model_config = ConfigDict(extra="forbid")

    metrics: list[ComponentRef] = Field(
        default_factory=lambda: [ComponentRef(name=n) for n in DEFAULT_METRICS],
        description="Metric names (or tables with name and options).",
    )
    judges: list[ComponentRef] = Field(default_factory=list, description="Judges run on every output.")
    decide: list[str] | None = Field(
        None,
        description="The decision family: the metrics (and judge:LABEL; latency_s, the seconds of each output; "
        "tokens, its input + output tokens) whose paired comparisons decide 'better' or 'worse' in compare, run and "
        "the gate, Holm-adjusted together. Default: every metric and judge that is not constant across every system.",
    )
    labelled: dict[str, str] | None = Field(
        None,
        description='Metrics decided on people\'s labels, e.g. { "judge:match" = "correct" }: compare and the gate '
        "decide each on prediction-powered estimates from the labels of its rubric (as --labelled METRIC=RUBRIC; "
        "docs/statistics.md, When the judge errs). Not with 'sequential', which decides while the run goes.",
    )
    frontier: FrontierSettings = Field(
        default_factory=FrontierSettings,
        description='What the quality-cost-latency frontier compares, e.g. { latency = "p95", cost = "tokens" }: '
        "latency, the quantile (p50, p95 or p99; default p50); cost, dollars per answered sample (default) or "
        "tokens per answered sample (docs/statistics.md, The frontier).",
    )
    budget: Budget | None = Field(
        None,
        description="Limits of one run session, any subset of { usd, calls, tokens, seconds }: no model call starts "
        "that could pass one (docs/llm.md, Estimates and budgets); a run that reaches one stops, is marked "
        "budget-limited and resumes with a larger budget. 'ragassay run --budget calls=100,usd=5' overrides it.",
    )
    sequential: SequentialSettings | None = Field(
        None,
        description="Sequential evaluation, e.g. { alpha = 0.05, batch = 50 }: samples in the seeded order, every "
        "comparison of the decision family tested after each batch with an anytime-valid confidence sequence, and "
        "a system's units no longer run once all its comparisons are settled (docs/statistics.md, Stopping "
        "early). 'ragassay run --sequential' switches it on with the defaults.",
    )
    order: Literal["seeded", "file"] = Field(
        "seeded",
        description="The order in which samples are processed. seeded: ascending hash of 'seed' and the question "
        "id, so a budget-limited, stopped or interrupted run has scored a uniform random subset (its verdicts say "
        "'partial: N of M samples, a uniform random subset'); file: the dataset's order (a partial run has scored "
        "the first N samples, not a random subset; a sequential run needs 'seeded'). Values never depend on it.",
    )
    seed: int = Field(
        42,
        description="Seed of the seeded sample order ('order'): a hash of the seed and the question id, the same "
        "order in every process.",
    )
    compat: Literal["ragassay", "unitxt"] = Field(
        "ragassay",
        description="Default 'compat' option of every metric that has one (and 'variant' of the ir_* metrics "
        "that have a 'unitxt' one): 'unitxt' reproduces Unitxt 1.26's values (0 where ragassay reports unscored); "
        "a metric's own option wins.",
    )

    @model_validator(mode="before")
    @classmethod
    def _judge_alias(cls, value: Any) -> Any:
        if isinstance(value, dict) and "judge" in value:
            value = dict(value)
            value["judges"] = list(value.get("judges", [])) + [value.pop("judge")]
        return value

    @model_validator(mode="after")
    def _labelled_not_sequential(self) -> EvaluationSection:
        if self.labelled and self.sequential is not None:
            raise ValueError(LABELLED_NOT_LIVE)
        return self

    @model_validator(mode="after")
    def _unique_keys(self) -> EvaluationSection:
        for field in ("metrics", "judges"):
            keys = [ref.key for ref in getattr(self, field)]
            dupes = sorted({k for k in keys if keys.count(k) > 1})
            if dupes:
                raise ValueError(f"{field} listed twice: {', '.join(dupes)}; give each a distinct 'label'")
        return self


class GateSection(BaseModel):
    """[gate]: how ``ragassay gate`` and ``assert_no_regression`` decide a regression (docs/ci.md)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["non-inferiority", "superiority"] = Field(
        "non-inferiority",
        description="non-inferiority: a pair passes only when its difference is shown to be above -margin; "
        "superiority: a pair fails only when it is shown to be worse (the paired test alone).",
    )
    margin: float = Field(
        0.02,
        ge=0,
        description="The largest drop that still passes, as a share of each metric's declared range (0.02: 2 "
        "points of a 0-1 metric); a metric with an open range needs its own entry in 'margins'.",
    )
    margins: dict[str, float] = Field(
        default_factory=dict,
        description="Per-metric margin in the metric's own units (e.g. { recall_at_k = 0.05, latency_s = 0.2 }).",
    )
    on_inconclusive: Literal["fail", "pass"] = Field(
        "fail",
        description="Exit code of a pair that is neither shown non-inferior nor shown worse (too few samples to "
        "tell): fail (exit 1, the default: an unproven change does not pass) or pass.",
    )

    @field_validator("margins")
    @classmethod
    def _non_negative(cls, margins: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in margins.items() if not v >= 0}
        if bad:
            raise ValueError(f"margins must be at least 0; got {bad}")
        return margins


DEFAULT_METRICS = ("token_recall", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k")


class Config(BaseModel):
    """A whole ragassay project configuration."""

    model_config = ConfigDict(extra="forbid")

    project: ProjectSection = Field(default_factory=ProjectSection)
    corpus: CorpusSection = Field(default_factory=CorpusSection)
    dataset: DatasetSection = Field(default_factory=DatasetSection)
    defaults: dict[str, ComponentRef] = Field(default_factory=dict, description="Default part per role.")
    systems: dict[str, SystemSection] = Field(default_factory=dict)
    grid: dict[str, GridSection] = Field(default_factory=dict)
    evaluation: EvaluationSection = Field(default_factory=EvaluationSection)
    gate: GateSection = Field(default_factory=GateSection)
    llm: LLMSection = Field(default_factory=LLMSection)
    analysis: AnalysisSection = Field(default_factory=AnalysisSection)
    watch: WatchSection = Field(default_factory=WatchSection, description="Standing rules of ragassay watch.")


@dataclasses.dataclass
class LoadedConfig:
    """A validated config and where it came from (relative paths resolve against ``base_dir``)."""

    config: Config
    path: Path
    key_prefix: str = ""

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def where(self, key_path: str) -> str:
        """'file: key.path' for error messages."""
        return f"{self.path.name}: {self.key_prefix}{key_path}"


def find_config(path: str | Path) -> tuple[Path, str]:
    """Return (file, key prefix) for a config file or a folder holding one."""
    path = Path(path)
    if path.is_dir():
        for name in CONFIG_NAMES:
            candidate = path / name
            if candidate.is_file() and (name == "ragassay.toml" or _has_tool_section(candidate)):
                return find_config(candidate)
        raise ConfigError(
            f"{path}: no ragassay.toml (or pyproject.toml with [tool.ragassay]) in this folder. "
            "Create one with: ragassay init"
        )
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found. Create one with: ragassay init")
    return path, ("tool.ragassay." if path.name == "pyproject.toml" else "")


def _has_tool_section(pyproject: Path) -> bool:
    try:
        return "ragassay" in tomllib.loads(pyproject.read_text("utf-8")).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False


def load_config(path: str | Path) -> LoadedConfig:
    """Read and validate a config file (or the one in a folder)."""
    file, prefix = find_config(path)
    try:
        data = tomllib.loads(file.read_text("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{file}: not valid TOML: {exc}. Fix the syntax at that line.") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read: {exc}") from exc
    if prefix:
        data = data.get("tool", {}).get("ragassay", {})
    return LoadedConfig(parse_config(data, file, prefix), file.resolve(), prefix)


def parse_config(data: dict[str, Any], file: Path | str = "config", prefix: str = "") -> Config:
    """Validate a config mapping, turning pydantic errors into one :class:`ConfigError`."""
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, Path(file).name, prefix, model=Config)) from None


def format_validation_error(
    exc: ValidationError, file: str, prefix: str = "", base: str = "", model: type[BaseModel] | None = None
) -> str:
    """One line per problem: ``file: key.path: message (got value)``."""
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if p not in ("parts", "axes")]
        key = ".".join(part for part in ([base] if base else []) + loc if part)
        key = key or "(top level)"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
            allowed = _allowed_keys(model, err["loc"][:-1])
            close = difflib.get_close_matches(str(err["loc"][-1]), allowed, n=1, cutoff=0.5)
            msg += f"; did you mean '{close[0]}'?" if close else "."
            msg += f" Allowed keys: {', '.join(allowed)}" if allowed else ""
        got = "" if err["type"] in ("missing", "extra_forbidden") else f" (got {err.get('input')!r})"
        lines.append(f"{file}: {prefix}{key}: {msg}{got}")
    return "\n".join(lines)


def _allowed_keys(model: type[BaseModel] | None, loc: tuple[Any, ...]) -> list[str]:
    """The keys a model accepts at ``loc`` (walking nested models and dict values), for error messages."""
    import typing

    current: Any = model
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return []
            current = field.annotation
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return []
        while typing.get_origin(current) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
            current = next(a for a in typing.get_args(current) if a is not type(None))
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []
