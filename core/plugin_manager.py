"""Loading plugins: entry points one by one, failures recorded (never fatal), components registered.

Environment switches:

``RAGASSAY_LOAD_PLUGINS``
    Comma-separated entry-point names: load only these (empty string: load none).
``RAGASSAY_DISABLE_PLUGINS``
    Comma-separated entry-point names never to load.
``RAGASSAY_TRACE_PLUGINS``
    Set to ``1`` to print every plugin load and hook call to stderr.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import traceback
from collections.abc import Iterable
from importlib import metadata
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError
from .registry import BUILTIN_DISTRIBUTION, Registry

ENTRY_POINT_GROUP = "ragassay"
hookimpl = pluggy.HookimplMarker("ragassay")


@dataclasses.dataclass
class PluginInfo:
    """A loaded plugin: its entry-point name, origin and the components it registered."""

    name: str
    distribution: str
    version: str
    components: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class PluginFailure:
    """A plugin that could not be loaded or whose registration failed."""

    name: str
    distribution: str
    version: str
    error: str
    traceback: str = ""

    @property
    def hint(self) -> str:
        return f"disable it with RAGASSAY_DISABLE_PLUGINS={self.name}, or reinstall {self.distribution or 'it'}"


class PluginHost:
    """The plugin manager, the registry it filled, and what failed."""

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.failures: list[PluginFailure] = []
        self.registry = Registry(failures=self.failures)  # "not found" errors name the failed plugins
        self.plugins: dict[str, PluginInfo] = {}
        self.trace = os.environ.get("RAGASSAY_TRACE_PLUGINS", "") not in ("", "0")

    # -- loading -------------------------------------------------------------------------------

    def load_entry_points(self) -> None:
        """Load every allowed entry point of the ``ragassay`` group, one at a time."""
        allow = _env_list("RAGASSAY_LOAD_PLUGINS")
        block = set(_env_list("RAGASSAY_DISABLE_PLUGINS") or [])
        origins: dict[int, tuple[str, str]] = {}  # by distribution: its metadata is parsed once, not per plugin
        for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if (allow is not None and ep.name not in allow) or ep.name in block:
                self._trace(f"skipping plugin {ep.name} (environment switch)")
                continue
            key = id(getattr(ep, "dist", None))
            if key not in origins:
                origins[key] = _origin(ep)
            dist, version = origins[key]
            try:
                module = ep.load()
            except BaseException as exc:  # noqa: BLE001 - any import failure is recorded, never fatal
                if isinstance(exc, KeyboardInterrupt):
                    raise
                self._record_failure(ep.name, dist, version, exc)
                continue
            self.add_plugin(module, name=ep.name, distribution=dist, version=version)

    def add_plugin(self, plugin: Any, *, name: str, distribution: str = "", version: str = "") -> bool:
        """Register one plugin object and its components; returns False (and records why) on failure."""
        if name in self.plugins:
            other = self.plugins[name]
            self._record_failure(
                name,
                distribution,
                version,
                PluginError(f"plugin name '{name}' is already used by {other.distribution} {other.version}"),
            )
            return False
        try:
            self.pm.register(plugin, name=name)
            self.pm.check_pending()
        except Exception as exc:  # noqa: BLE001
            if self.pm.is_registered(plugin):
                self.pm.unregister(plugin)
            self._record_failure(name, distribution, version, exc)
            return False
        info = PluginInfo(name, distribution, version)
        try:
            self._register_components(plugin, info)
        except Exception as exc:  # noqa: BLE001
            self.pm.unregister(plugin)
            self._record_failure(name, distribution, version, exc)
            return False
        self.plugins[name] = info
        self._trace(f"loaded plugin {name} ({distribution} {version}): {', '.join(info.components) or 'nothing'}")
        return True

    def _register_components(self, plugin: Any, info: PluginInfo) -> None:
        """Call each of the plugin's register_<kind> hooks with a register bound to this plugin.

        All-or-nothing: a plugin whose registration fails adds no component at all.
        """
        staged: list[tuple[str, type]] = []
        for hook_name, kind in hookspecs.HOOK_KINDS.items():
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                self._trace(f"calling {info.name}.{hook_name}")
                kwargs = {"register": lambda cls, _k=kind: staged.append((_k, cls))}
                impl.function(**{k: v for k, v in kwargs.items() if k in impl.argnames})
        trial = Registry()
        for kind, cls in staged:  # validate (and detect duplicates inside the plugin) before committing
            trial.add(kind, cls, plugin=info.name, distribution=info.distribution, version=info.version)
        for kind, cls in staged:
            added = self.registry.add(kind, cls, plugin=info.name, distribution=info.distribution, version=info.version)
            info.components.append(f"{kind}:{added.name}")

    def _record_failure(self, name: str, dist: str, version: str, exc: BaseException) -> None:
        error = f"{type(exc).__name__}: {exc}"
        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.failures.append(PluginFailure(name, dist, version, error, tb))
        self._trace(f"plugin {name} failed: {error}")

    def _trace(self, message: str) -> None:
        if self.trace:
            print(f"ragassay-trace: {message}", file=sys.stderr)


def _env_list(variable: str) -> list[str] | None:
    value = os.environ.get(variable)
    if value is None:
        return None
    return [item.strip() for item in value.split(",") if item.strip()]


def _origin(ep: metadata.EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def load_plugins(extra: Iterable[tuple[str, Any]] = (), *, entry_points: bool = True) -> PluginHost:
    """Create a :class:`PluginHost`, load entry points (unless disabled) and extra in-process plugins.

    ``extra`` is a sequence of ``(name, plugin_object)``; they are treated as third-party plugins, so
    their components are addressed as ``name/component``. A plugin that is also installed (its entry point of
    the same name loaded the same module) is registered once; another object under a taken name is a
    recorded failure.
    """
    host = PluginHost()
    if entry_points:
        host.load_entry_points()
    for name, plugin in extra:
        if host.pm.get_plugin(name) is plugin:
            continue  # the same module, pip-installed and loaded from its entry point already
        host.add_plugin(plugin, name=name, distribution=name, version="in-process")
    return host


_default_host: PluginHost | None = None


def get_plugin_host() -> PluginHost:
    """The process-wide plugin host, loaded on first use."""
    global _default_host
    if _default_host is None:
        _default_host = load_plugins()
    return _default_host


def is_builtin(distribution: str) -> bool:
    return distribution == BUILTIN_DISTRIBUTION
