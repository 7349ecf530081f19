"""Generic ``ragassay run`` flags that set options of the dataset source: ``--sample 5%`` and ``--where KEY=VALUE``.

They apply to any source whose options model declares ``sample`` or ``where`` (the ``traces`` source does), so
one command scores a sampled or filtered subset without editing the config. The flags replace ``[dataset] options``
``sample`` and add to its ``where`` (a key given on the command line replaces the config's; a key given twice takes
either value). The run's stored config records the options in effect, and its samples (hence its fingerprint)
are those of the subset, so a sampled run never resumes the full one. A source without the option is refused
with one line, never ignored.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ..config import LoadedConfig
from ..errors import ConfigError
from ..registry import Registry


def parse_where(pairs: Sequence[str]) -> dict[str, str | list[str]]:
    """``KEY=VALUE`` pairs as a ``where`` table: a key given several times maps to the list of its values."""
    where: dict[str, str | list[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--where {pair!r}: give KEY=VALUE, e.g. --where service.version=1.1")
        known = where.get(key)
        where[key] = value if known is None else [*([known] if isinstance(known, str) else known), value]
    return where


def with_source_options(
    loaded: LoadedConfig, registry: Registry, *, sample: str | None = None, where: Sequence[str] = ()
) -> LoadedConfig:
    """``loaded`` (a copy) with ``--sample`` and ``--where`` set in ``[dataset] options``; unchanged when neither
    is given. :class:`ConfigError` when the dataset source's options model does not declare the option."""
    updates: dict[str, Any] = {}
    if sample is not None:
        updates["sample"] = sample
    if where:
        updates["where"] = parse_where(where)
    if not updates:
        return loaded
    section = loaded.config.dataset
    fields = getattr(registry.get("dataset_source", section.source).cls.Options, "model_fields", {})
    for name, flag in (("sample", "--sample"), ("where", "--where")):
        if name in updates and name not in fields:
            raise ConfigError(
                f"{loaded.where('dataset.source')}: dataset source '{section.source}' has no option '{name}', so "
                f"{flag} cannot apply; it works with a source that declares it (e.g. 'traces'). Leave {flag} out, "
                "or select the samples in the data itself"
            )
    options = dict(section.options)
    if "where" in updates:
        configured = options.get("where") or {}
        updates["where"] = {**configured, **updates["where"]} if isinstance(configured, dict) else updates["where"]
    options.update(updates)
    dataset = section.model_copy(update={"options": options})
    return dataclasses.replace(loaded, config=loaded.config.model_copy(update={"dataset": dataset}))
