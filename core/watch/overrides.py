"""``ragassay watch`` options over ``[watch]``: each given option replaces one key, and the result is validated
as the section is (an error names the option)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..config import format_validation_error
from ..config.watch import WatchBudget, WatchSection
from ..errors import ConfigError


def parse_pairs(items: tuple[str, ...] | list[str], option: str, example: str) -> dict[str, str]:
    """``KEY=VALUE`` items (each may hold several, comma-separated) as a dict; a ConfigError naming ``option``."""
    found: dict[str, str] = {}
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            key, sep, value = (s.strip() for s in part.partition("="))
            if not sep or not key or not value:
                raise ConfigError(f"{option} {part!r}: write KEY=VALUE, e.g. {option} {example}")
            found[key] = value
    return found


def with_overrides(rules: WatchSection, given: dict[str, Any]) -> WatchSection:
    """``rules`` with the options that were given (None: not given) put in place; validated whole."""
    data = rules.model_dump(exclude_unset=False)
    sinks = dict(data["sinks"])
    for key in ("webhook", "jsonl"):
        if given.get(key) is not None:
            sinks[key] = given[key]
    data["sinks"] = sinks
    for key in ("name", "sample", "alpha", "quiet_s", "otlp"):
        if given.get(key) is not None:
            data[key] = given[key]
    if given.get("metrics"):
        data["metrics"] = [{"name": name} for name in given["metrics"]]
    if given.get("version_keys"):
        data["version_keys"] = list(given["version_keys"])
    if given.get("where"):
        data["where"] = {**data["where"], **given["where"]}
    if given.get("budget"):
        data["budget"] = _budget(given["budget"])
    reference = _reference(data.get("reference"), given)
    if reference is not None:
        data["reference"] = reference
    try:
        return WatchSection.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc, "ragassay watch", base="watch")) from None


def _budget(pairs: dict[str, str]) -> dict[str, float]:
    unknown = sorted(set(pairs) - set(WatchBudget.model_fields))
    if unknown:
        raise ConfigError(
            f"--budget {', '.join(unknown)}: not a limit; give {', '.join(WatchBudget.model_fields)} "
            "(e.g. --budget calls_per_hour=100,usd_per_day=5)"
        )
    try:
        return {key: float(value) for key, value in pairs.items()}
    except ValueError:
        raise ConfigError("--budget: every limit is a number, e.g. --budget calls_per_hour=100") from None


def _reference(configured: dict[str, Any] | None, given: dict[str, Any]) -> dict[str, Any] | None:
    """The reference after ``--reference-run``, ``--target`` and ``--margin`` (None: as configured)."""
    run, targets, margin = given.get("reference_run"), given.get("target"), given.get("margin")
    if run is None and not targets and margin is None:
        return None
    if run is not None and targets:
        raise ConfigError("--reference-run and --target cannot go together: give one reference")
    reference = dict(configured or {})
    if run is not None or targets:
        reference = {"margin": reference.get("margin", 0.0)}
    if run is not None:
        reference["run"] = run
    if targets:
        try:
            reference["target"] = {key: float(value) for key, value in targets.items()}
        except ValueError:
            raise ConfigError("--target: each value is a number, e.g. --target k_precision=0.9") from None
    if margin is not None:
        reference["margin"] = margin
    return reference
