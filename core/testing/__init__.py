"""Helpers for testing a plugin in-process: build one component, load plugins, run a tiny project.

::

    from ragassay import testing

    retriever = testing.component("retriever", TfIdfRetriever, sublinear_tf=False)
    registry = testing.registry_with(my_plugin_module)          # entry points plus your plugin
    result = testing.run_project(tmp_path, {"systems": {"tfidf": {"retriever": "tfidf/tfidf",
                                                                   "generator": "extractive"}}},
                                 plugins={"tfidf": my_plugin_module},
                                 corpus={"a.md": "Salmon swim upstream."},
                                 samples=[{"question_id": "q1", "question": "What swims upstream?",
                                           "reference_answers": ["Salmon"]}])
    assert result.failed == 0 and result.metric("tfidf", "q1", "exact_match") is not None

The pytest plugin (:mod:`ragassay.testing.pytest_plugin`, installed with ragassay) adds the fixtures
``ragassay_context`` (a throwaway :class:`ragassay.ComponentContext` in ``tmp_path``) and ``ragassay_project``
(``run_project`` bound to ``tmp_path``). This module does not import pytest.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..components import KIND_BASES, Component, ComponentContext
from ..errors import PluginError
from ..models import RAGOutput, Sample
from .assertions import assert_metric, assert_no_regression  # noqa: F401  (re-exported for plugin tests)

Plugins = Mapping[str, Any] | Iterable[Any]


def registry_with(*plugins: Any, entry_points: bool = True) -> Any:
    """A registry with the installed entry points (unless ``entry_points=False``) and ``plugins``.

    Each plugin is a module or object with hook implementations, or a ``(name, plugin)`` pair; a bare module
    is named by the last part of its ``__name__``. Its components are addressed as ``name/component``.
    A plugin that fails to register raises :class:`ragassay.PluginError` with the reason (a test must know).
    """
    from ..plugin_manager import load_plugins

    named = [_named(p) for p in plugins]
    host = load_plugins(named, entry_points=entry_points)
    failed = [f for f in host.failures if f.name in {name for name, _ in named}]
    if failed:
        raise PluginError("; ".join(f"plugin '{f.name}' failed to load: {f.error}" for f in failed))
    return host.registry


def _named(plugin: Any) -> tuple[str, Any]:
    if isinstance(plugin, tuple) and len(plugin) == 2 and isinstance(plugin[0], str):
        return plugin
    name = getattr(plugin, "__name__", None) or type(plugin).__name__
    return name.rsplit(".", 1)[-1].lower(), plugin


def throwaway_context(folder: str | Path | None = None, *, registry: Any = None) -> ComponentContext:
    """A throwaway component context: project folder ``folder`` (a new temporary folder when None)."""
    root = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="ragassay-test-"))
    return ComponentContext(project_dir=root, cache_dir=root / ".ragassay-cache", registry=registry)


def component(
    kind: str,
    name_or_class: str | type[Component],
    *,
    plugins: Sequence[Any] = (),
    context: ComponentContext | None = None,
    **options: Any,
) -> Any:
    """Build one component with ``options`` validated by its Options model, in a throwaway context.

    ``name_or_class`` is a registered name (``"bm25"``, ``"myplugin/tfidf"``) or the class itself; nested
    references in its options resolve against the installed plugins plus ``plugins``.
    """
    ctx = context or throwaway_context(registry=registry_with(*plugins))
    if ctx.registry is None:
        ctx = dataclasses.replace(ctx, registry=registry_with(*plugins))
    if isinstance(name_or_class, str):
        cls = ctx.registry.get(kind, name_or_class).cls
    else:
        cls = name_or_class
        if not issubclass(cls, KIND_BASES[kind]):
            raise TypeError(f"{cls.__name__} is not a {kind} (a subclass of ragassay.{KIND_BASES[kind].__name__})")
    return cls(cls.Options.model_validate(options), context=ctx)


@dataclasses.dataclass
class ProjectRun:
    """What :func:`run_project` ran: the summary and what was stored, read back from the results database."""

    root: Path
    summary: Any
    metrics: dict[tuple[str, str, str], float | None]
    unscored: dict[tuple[str, str, str], str]
    judgements: dict[tuple[str, str, str], str]
    outputs: dict[tuple[str, str], RAGOutput]

    @property
    def failed(self) -> int:
        """Units that failed."""
        return self.summary.failed

    def metric(self, system: str, question_id: str, metric: str) -> float | None:
        """The stored value (None when unscored; see ``unscored`` for the reason)."""
        return self.metrics[(system, question_id, metric)]


def run_project(
    root: str | Path,
    config: Mapping[str, Any],
    *,
    plugins: Mapping[str, Any] | None = None,
    corpus: Mapping[str, str] | None = None,
    samples: Sequence[Mapping[str, Any] | Sample] | None = None,
) -> ProjectRun:
    """Write a tiny project under ``root`` and run it with the real runner and store.

    ``corpus`` (file name -> text) is written to ``corpus/`` and becomes ``[corpus] paths`` unless the config
    sets a corpus; ``samples`` are written to ``qa.jsonl`` and become the dataset unless the config sets one.
    ``plugins`` (name -> module or object) are loaded in-process besides the installed entry points.
    """
    from ..config import load_config
    from ..engine.project import Project
    from ..engine.runner import Runner, plan_run

    root = Path(root)
    data = {key: dict(value) if isinstance(value, Mapping) else value for key, value in config.items()}
    if corpus is not None:
        (root / "corpus").mkdir(parents=True, exist_ok=True)
        for name, text in corpus.items():
            (root / "corpus" / name).write_text(text, encoding="utf-8")
        data.setdefault("corpus", {"paths": ["corpus/*"]})
    if samples is not None:
        rows = [s.model_dump(mode="json") if isinstance(s, Sample) else dict(s) for s in samples]
        (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        data.setdefault("dataset", {"options": {"path": "qa.jsonl"}})
    (root / "ragassay.toml").write_text(to_toml(data), encoding="utf-8")
    loaded = load_config(root)
    registry = registry_with(*(plugins or {}).items())
    store = Project(loaded).open_store()
    try:
        summary = asyncio.run(Runner(plan_run(loaded, registry), store).run())
        return _read_back(root, store, summary)
    finally:
        store.close()


def _read_back(root: Path, store: Any, summary: Any) -> ProjectRun:
    from ..results import read_run

    run = read_run(store, summary.run_id, payloads=True)
    metrics = run.records(kind="metric", repeat=0)
    return ProjectRun(
        root=root,
        summary=summary,
        metrics={(s.system, s.question_id, s.label): s.value for s in metrics},
        unscored={(s.system, s.question_id, s.label): s.unscored_reason for s in metrics if s.unscored_reason},
        judgements={(s.system, s.question_id, s.label): s.verdict for s in run.records(kind="judge", repeat=0)},
        outputs={
            key: run.payload(*key) for key, output in run.outputs.items() if output.ok and output.payload is not None
        },
    )


def to_toml(data: Mapping[str, Any]) -> str:
    """A config mapping as TOML: one ``[section]`` per top-level table, nested tables inline."""
    lines = [f"{key} = {_toml_value(value)}" for key, value in data.items() if not isinstance(value, Mapping)]
    for key, value in data.items():
        if isinstance(value, Mapping):
            lines += ["", f"[{key}]"] + [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()]
    return "\n".join(lines) + "\n"


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} {value!r} to a TOML config")
