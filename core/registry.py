"""The component registry: every component class that plugins registered, by kind and name."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from .components import KIND_BASES, Component
from .errors import ComponentNotFoundError, PluginError
from .models import INPUTS, unknown_inputs

_NAME = re.compile(r"^[a-z][a-z0-9_.-]*$")
BUILTIN_DISTRIBUTION = "ragassay"


@dataclasses.dataclass(frozen=True)
class ComponentInfo:
    """A registered component class and where it came from."""

    kind: str
    name: str
    cls: type[Component]
    plugin: str
    distribution: str
    version: str

    @property
    def description(self) -> str:
        return self.cls.description()


class Registry:
    """Registered components by kind and name, with helpful lookups.

    ``failures`` are the plugins that failed to load (objects with ``name``, ``error`` and ``hint``, such as
    ``PluginFailure``); a "not found" error names those that could have provided the missing component.

    ``resolver``, when set, is called as ``resolver(kind, name)`` when a lookup misses, and as
    ``resolver(None, None)`` before anything is listed; it may add components (a lazy plugin host loads the
    plugins it deferred) and clears itself once nothing is left to load.
    """

    def __init__(self, failures: Sequence[Any] = ()) -> None:
        self._by_kind: dict[str, dict[str, ComponentInfo]] = {kind: {} for kind in KIND_BASES}
        self.failures = failures
        self.resolver: Callable[[str | None, str | None], None] | None = None

    def add(self, kind: str, cls: type, *, plugin: str, distribution: str, version: str) -> ComponentInfo:
        """Validate ``cls`` as a ``kind`` component and add it; raises :class:`PluginError` if invalid."""
        _validate_component(kind, cls, plugin)
        builtin = distribution == BUILTIN_DISTRIBUTION
        full_name = cls.name if builtin else f"{plugin}/{cls.name}"
        existing = self._by_kind[kind].get(full_name)
        if existing is not None:
            raise PluginError(
                f"duplicate {kind} '{full_name}': registered by plugin '{existing.plugin}' "
                f"({existing.distribution} {existing.version}) and again by plugin '{plugin}' "
                f"({distribution} {version}). Rename one, or disable a plugin with RAGASSAY_DISABLE_PLUGINS."
            )
        info = ComponentInfo(kind, full_name, cls, plugin, distribution, version)
        self._by_kind[kind][full_name] = info
        return info

    def get(self, kind: str, name: str) -> ComponentInfo:
        """Look up a component; the error lists close matches and what is installed."""
        found = self._by_kind.get(kind, {}).get(name)
        if found is None and self.resolver is not None:
            self.resolver(kind, name)  # the plugins said to provide it
            found = self._by_kind.get(kind, {}).get(name)
        if found is None and self.resolver is not None:
            self.complete()  # said wrongly, or not at all: every plugin
            found = self._by_kind.get(kind, {}).get(name)
        if found is not None:
            return found
        raise ComponentNotFoundError(self.not_found_message(kind, name))

    def __getstate__(self) -> dict[str, Any]:
        """A copy for another process (a Ray worker) has every component and no resolver: the copy could not load
        what this process's plugin host deferred."""
        self.complete()
        return {**self.__dict__, "resolver": None}

    def complete(self) -> None:
        """Have every plugin's components here (a lazy host loads what it deferred)."""
        if self.resolver is not None:
            self.resolver(None, None)

    def not_found_message(self, kind: str, name: str) -> str:
        self.complete()
        names = sorted(self._by_kind.get(kind, {}))
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.5)
        if not close:  # a bare third-party name: suggest its namespaced form
            close = [n for n in names if n.endswith("/" + name)][:1]
        hint = f" Did you mean '{close[0]}'?" if close else ""
        installed = ", ".join(names) if names else "none"
        return f"no {kind.replace('_', ' ')} named '{name}'.{hint} Installed: {installed}.{self._failed_hint(name)}"

    def _failed_hint(self, name: str) -> str:
        """The failed plugins that could provide ``name`` (the one it names, else all of them), with errors."""
        if not self.failures:
            return ""
        plugin = name.split("/", 1)[0]
        named = [f for f in self.failures if f.name == plugin]
        suspects = named or list(self.failures)
        lead = "it would come from plugin" if named else "possible providers that failed to load:"
        listed = "; ".join(f"'{f.name}' ({f.error})" for f in suspects)
        return f" Failed to load, {lead} {listed}; see `ragassay plugins` ({suspects[0].hint})."

    def kinds(self) -> list[str]:
        return list(self._by_kind)

    def of_kind(self, kind: str) -> list[ComponentInfo]:
        self.complete()
        return [self._by_kind[kind][n] for n in sorted(self._by_kind.get(kind, {}))]

    def in_order(self, kind: str) -> list[ComponentInfo]:
        """The components of ``kind`` in the order they were registered (:meth:`of_kind` sorts them by name)."""
        self.complete()
        return list(self._by_kind.get(kind, {}).values())

    def all(self) -> list[ComponentInfo]:
        self.complete()
        return [info for kind in self._by_kind for info in self.of_kind(kind)]


def _validate_component(kind: str, cls: type, plugin: str) -> None:
    base = KIND_BASES[kind]
    where = f"plugin '{plugin}' registered {cls!r} as a {kind}"
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise PluginError(f"{where}, but it is not a subclass of ragassay.{base.__name__}.")
    name = getattr(cls, "name", "")
    if not isinstance(name, str) or not _NAME.match(name):
        raise PluginError(
            f"{where} with name {name!r}; a name must be lowercase letters, digits, '_', '-' or '.', "
            "starting with a letter."
        )
    options = getattr(cls, "Options", None)
    if not (isinstance(options, type) and issubclass(options, BaseModel)):
        raise PluginError(f"{where}, but its Options is not a pydantic BaseModel subclass.")
    if options.model_config.get("extra") != "forbid":
        raise PluginError(
            f"{where}, but its Options model {options.__qualname__} accepts unknown keys, so a misspelled option "
            'would be silently ignored; add model_config = ConfigDict(extra="forbid") to it.'
        )
    if kind in ("metric", "judge"):
        _validate_requires(cls, where)


def _validate_requires(cls: type, where: str) -> None:
    """``requires`` is a set of names of :data:`ragassay.models.INPUTS` (a misspelled one would check nothing)."""
    requires = getattr(cls, "requires", frozenset())
    if not isinstance(requires, (set, frozenset)) or not all(isinstance(n, str) for n in requires):
        raise PluginError(f"{where}, but its requires is {requires!r}; it must be a frozenset of input names.")
    unknown = unknown_inputs(requires)
    if unknown:
        raise PluginError(
            f"{where}, but its requires names {', '.join(map(repr, unknown))}, which is no input; the inputs are "
            f"{', '.join(INPUTS)} (docs/metrics.md, Required inputs)."
        )
