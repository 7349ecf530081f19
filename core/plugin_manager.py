"""Loading plugins: entry points one by one, failures recorded (never fatal), components registered.

Environment switches:

``RAGASSAY_LOAD_PLUGINS``
    Comma-separated entry-point names: load only these (empty string: load none).
``RAGASSAY_DISABLE_PLUGINS``
    Comma-separated entry-point names never to load.
``RAGASSAY_TRACE_PLUGINS``
    Set to ``1`` to print every plugin load and hook call to stderr.
``RAGASSAY_PLUGIN_INDEX``
    The plugin index file (:mod:`ragassay.plugin_index`), or ``off`` to load every plugin at start.

The process-wide host (:func:`get_plugin_host`) loads every allowed entry point when it is made, as pytest and llm
do. The ``ragassay`` command asks for lazy loading instead (:func:`defer_plugin_imports`, called by its process
policy, :mod:`ragassay.cli.process`): an entry point the plugin index knows is then imported when one of its
components is looked up, and every entry point is loaded before anything lists components or plugins.

Two installed entry points with the same name: ragassay's own, else the first in the order of (distribution name,
version, target), is loaded and the other is refused (a recorded failure naming both), eager or lazy, in every
process alike.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import traceback
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from . import hookspecs, plugin_index
from .entry_points import installed
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
    key: str = ""  # the plugin index's key of its entry point ("" for an in-process plugin)


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


@dataclasses.dataclass
class _EntryPoint:
    """An allowed entry point of the ``ragassay`` group, with its distribution and index key."""

    ep: metadata.EntryPoint
    distribution: str
    version: str

    @property
    def key(self) -> str:
        return plugin_index.entry_key(self.ep.name, self.ep.value, self.distribution, self.version)


class PluginHost:
    """The plugin manager, the registry it filled, and what failed.

    ``plugins`` and ``failures`` are complete: reading them loads any entry point a lazy host deferred.
    """

    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.pm.add_hookspecs(hookspecs)
        self._failures: list[PluginFailure] = []
        self.registry = Registry(failures=self._failures)  # "not found" errors name the failed plugins
        self._plugins: dict[str, PluginInfo] = {}
        self._deferred: dict[str, tuple[_EntryPoint, list[str]]] = {}  # name -> (entry point, indexed components)
        self._index: dict[str, list[str]] | None = None  # what the index file should say, when lazy
        self._index_path: Path | None = None
        self._lock = threading.RLock()
        self.trace = os.environ.get("RAGASSAY_TRACE_PLUGINS", "") not in ("", "0")

    @property
    def plugins(self) -> dict[str, PluginInfo]:
        """Every loaded plugin by entry-point name (deferred ones are loaded first)."""
        self.load_deferred()
        return self._plugins

    @property
    def failures(self) -> list[PluginFailure]:
        """Every plugin that failed to load or register (deferred ones are loaded first)."""
        self.load_deferred()
        return self._failures

    # -- loading -------------------------------------------------------------------------------

    def load_entry_points(self, *, lazy: bool = False) -> None:
        """Load every allowed entry point of the ``ragassay`` group, one at a time.

        With ``lazy``, an entry point the plugin index knows is only noted; it is loaded when the registry looks
        up one of its components, or lists components (:mod:`ragassay.plugin_index`).
        """
        path = plugin_index.index_path() if lazy else None
        index = plugin_index.read_index(path)
        for entry in self._allowed_entry_points():
            known = index.get(entry.key) if index is not None else None
            if known is not None and entry.ep.name not in self._plugins:
                self._deferred[entry.ep.name] = (entry, known)
                self._trace(f"deferring plugin {entry.ep.name} (indexed: {', '.join(known) or 'nothing'})")
                continue
            self._load_entry_point(entry)
        if path is None:
            return
        # with an environment switch only some entry points were seen: the index is read, never rewritten
        switched = _env_list("RAGASSAY_LOAD_PLUGINS") is not None or bool(_env_list("RAGASSAY_DISABLE_PLUGINS"))
        self._index_path = None if switched else path
        self._index = {entry.key: known for entry, known in self._deferred.values()}
        self._index.update(self._loaded_entries)
        if self._index != index:
            plugin_index.write_index(self._index_path, self._index)
        if self._deferred:
            self.registry.resolver = self._resolve

    def load_deferred(self, names: Iterable[str] | None = None) -> None:
        """Load the deferred entry points (``names``, else all of them), in name order."""
        with self._lock:  # a lookup from another thread waits for the plugin, never sees it half registered
            for name in sorted(self._deferred if names is None else names):
                if name in self._deferred:
                    self._load_deferred(name)
            if not self._deferred:
                self.registry.resolver = None

    def _resolve(self, kind: str | None, name: str | None) -> None:
        """The registry missed ``kind:name`` (None: it lists everything): load what the index says provides it."""
        if kind is None:
            self.load_deferred()
            return
        wanted = f"{kind}:{name}"
        self.load_deferred([n for n, (_, known) in self._deferred.items() if wanted in known])

    def _load_deferred(self, name: str) -> None:
        entry, known = self._deferred.pop(name)
        self._trace(f"loading deferred plugin {name}")
        self._load_entry_point(entry)
        loaded = self._loaded_entries.get(entry.key)
        if loaded != known and self._index is not None:  # the plugin changed in place, or broke: re-index it
            self._index.pop(entry.key, None)
            if loaded is not None:
                self._index[entry.key] = loaded
            plugin_index.write_index(self._index_path, self._index)

    @property
    def _loaded_entries(self) -> dict[str, list[str]]:
        """Index entries of the entry points loaded so far (in-process plugins have none)."""
        return {info.key: list(info.components) for info in self._plugins.values() if info.key}

    def _allowed_entry_points(self) -> list[_EntryPoint]:
        allow = _env_list("RAGASSAY_LOAD_PLUGINS")
        block = set(_env_list("RAGASSAY_DISABLE_PLUGINS") or [])
        origins: dict[int, tuple[str, str]] = {}  # by distribution: its metadata is parsed once, not per plugin
        allowed = []
        for ep in installed(ENTRY_POINT_GROUP):
            if (allow is not None and ep.name not in allow) or ep.name in block:
                self._trace(f"skipping plugin {ep.name} (environment switch)")
                continue
            key = id(getattr(ep, "dist", None))
            if key not in origins:
                origins[key] = _origin(ep)
            allowed.append(_EntryPoint(ep, *origins[key]))
        allowed.sort(key=lambda e: (e.ep.name, not is_builtin(e.distribution), e.distribution, e.version, e.ep.value))
        return self._refuse_duplicates(allowed)

    def _refuse_duplicates(self, entries: list[_EntryPoint]) -> list[_EntryPoint]:
        """The first entry point of each name (``entries`` are sorted); the others are recorded failures. Decided
        before anything is loaded or deferred, so the same one wins in every process, eager or lazy."""
        kept: list[_EntryPoint] = []
        for entry in entries:
            if kept and kept[-1].ep.name == entry.ep.name:
                first = kept[-1]
                error = PluginError(
                    f"plugin name '{entry.ep.name}' is installed twice: {first.distribution} {first.version} "
                    f"({first.ep.value}) is loaded, {entry.distribution} {entry.version} ({entry.ep.value}) is not; "
                    "uninstall one of them"
                )
                self._record_failure(entry.ep.name, entry.distribution, entry.version, error)
                continue
            kept.append(entry)
        return kept

    def _load_entry_point(self, entry: _EntryPoint) -> None:
        try:
            module = entry.ep.load()
        except BaseException as exc:  # noqa: BLE001 - any import failure is recorded, never fatal
            if isinstance(exc, KeyboardInterrupt):
                raise
            self._record_failure(entry.ep.name, entry.distribution, entry.version, exc)
            return
        if self.add_plugin(module, name=entry.ep.name, distribution=entry.distribution, version=entry.version):
            self._plugins[entry.ep.name].key = entry.key

    def add_plugin(self, plugin: Any, *, name: str, distribution: str = "", version: str = "") -> bool:
        """Register one plugin object and its components; returns False (and records why) on failure."""
        if name in self._plugins:
            other = self._plugins[name]
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
        self._plugins[name] = info
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
        self._failures.append(PluginFailure(name, dist, version, error, tb))
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


def load_plugins(extra: Iterable[tuple[str, Any]] = (), *, entry_points: bool = True, lazy: bool = False) -> PluginHost:
    """Create a :class:`PluginHost`, load entry points (unless disabled) and extra in-process plugins.

    With ``lazy`` (and no ``extra``), entry points the plugin index knows are loaded on first use
    (:mod:`ragassay.plugin_index`).

    ``extra`` is a sequence of ``(name, plugin_object)``; they are treated as third-party plugins, so
    their components are addressed as ``name/component``. A plugin that is also installed (its entry point of
    the same name loaded the same module) is registered once; another object under a taken name is a
    recorded failure.
    """
    host = PluginHost()
    extra = list(extra)
    if entry_points:
        host.load_entry_points(lazy=lazy and not extra)
    for name, plugin in extra:
        if host.pm.get_plugin(name) is plugin:
            continue  # the same module, pip-installed and loaded from its entry point already
        host.add_plugin(plugin, name=name, distribution=name, version="in-process")
    return host


_default_host: PluginHost | None = None
_defer_imports: list[bool] = []  # set by defer_plugin_imports()


def defer_plugin_imports() -> None:
    """Make the process-wide host lazy (:mod:`ragassay.plugin_index`): a plugin is imported when one of its
    components is first looked up, so its import side effects may happen late, or never. The ``ragassay``
    command's process policy calls this (:mod:`ragassay.cli.process`); a library user, a notebook or a test gets
    every plugin loaded at once, unless it calls this first."""
    _defer_imports[:] = [True]


def get_plugin_host() -> PluginHost:
    """The process-wide plugin host, made on first use: every plugin loaded (lazily after
    :func:`defer_plugin_imports`)."""
    global _default_host
    if _default_host is None:
        _default_host = load_plugins(lazy=bool(_defer_imports))
    return _default_host


def is_builtin(distribution: str) -> bool:
    return distribution == BUILTIN_DISTRIBUTION
