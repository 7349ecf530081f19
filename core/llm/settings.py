"""``[llm]`` config section: response cache and the price table extension."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ModelPrice(BaseModel):
    """Price of one model in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input_per_million: float = Field(ge=0, description="USD per million input tokens.")
    output_per_million: float = Field(ge=0, description="USD per million output tokens.")
    cached_input_per_million: float | None = Field(
        default=None, ge=0, description="USD per million cached input tokens (default: the input price)."
    )
    reasoning_per_million: float | None = Field(
        default=None,
        ge=0,
        description="USD per million reasoning (thinking) output tokens (default: the output price).",
    )


class LLMSection(BaseModel):
    """[llm]: settings shared by every model call of a run."""

    model_config = ConfigDict(extra="forbid")

    cache: bool = Field(default=True, description="Use the persistent response cache.")
    cache_path: str = Field(
        default="llm-cache.db", description="Response cache database, relative to [project] cache_dir (or a URL)."
    )
    prices: dict[str, ModelPrice] = Field(
        default_factory=dict, description="Extra or overriding prices, keyed by model name."
    )


class LLMRuntime(BaseModel):
    """The LLM settings of one run, as components see them in ``ComponentContext.settings["llm"]``."""

    model_config = ConfigDict(extra="forbid")

    cache: bool = Field(default=True, description="Whether the response cache is read and written.")
    cache_url: str = Field(description="SQLAlchemy URL of the response cache.")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="Extra prices from [llm.prices].")


def cache_url(cache_path: str, cache_dir: Path) -> str:
    """A SQLAlchemy URL from ``[llm] cache_path``: URLs are kept, paths resolve under ``cache_dir``."""
    if "://" in cache_path:
        return cache_path
    path = Path(cache_path).expanduser()
    return f"sqlite:///{path if path.is_absolute() else Path(cache_dir) / path}"


def runtime_settings(section: LLMSection, cache_dir: Path, *, no_cache: bool = False) -> dict[str, Any]:
    """What ``plan_run`` puts in ``ComponentContext.settings["llm"]`` (``--no-cache`` turns the cache off)."""
    return LLMRuntime(
        cache=section.cache and not no_cache, cache_url=cache_url(section.cache_path, cache_dir), prices=section.prices
    ).model_dump(mode="json")


def runtime_from_context(context: Any) -> LLMRuntime:
    """The run's LLM settings from a component context (defaults when built outside a run)."""
    raw = (getattr(context, "settings", None) or {}).get("llm")
    if raw is None:
        section = LLMSection()
        return LLMRuntime.model_validate(runtime_settings(section, Path(context.cache_dir)))
    return raw if isinstance(raw, LLMRuntime) else LLMRuntime.model_validate(raw)
