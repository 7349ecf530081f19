"""One project: everything derived from a loaded config, once, and shared by every command and the API.

``run``, ``generate``, ``cache`` and :func:`ragassay.run` all go through a :class:`Project`: where the results
database and the caches are, the LLM runtime settings (response cache, prices), the component context, the
dataset source and its sample stream (``[dataset] limit`` applied while streaming), the corpus.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..components import ComponentContext, Corpus
from ..config import LoadedConfig, load_config
from ..errors import ConfigError
from ..models import Sample
from ..registry import Registry
from .systems import ResolvedComponent


@dataclasses.dataclass
class Project:
    """A loaded config with its derived paths, settings and data access."""

    loaded: LoadedConfig
    registry: Registry | None = None  # None for commands that build no component (``cache``)
    no_cache: bool = False

    @classmethod
    def load(
        cls, config: str | Path | LoadedConfig, registry: Registry | None = None, *, no_cache: bool = False
    ) -> Project:
        """A project from a config file, a folder holding one, or a loaded config (default: installed plugins)."""
        if registry is None:
            from ..plugin_manager import get_plugin_host

            registry = get_plugin_host().registry
        loaded = config if isinstance(config, LoadedConfig) else load_config(config)
        return cls(loaded, registry, no_cache=no_cache)

    @property
    def config(self):
        return self.loaded.config

    @property
    def base_dir(self) -> Path:
        return self.loaded.base_dir

    @property
    def cache_dir(self) -> Path:
        """``[project] cache_dir`` resolved against the config's folder."""
        return self.base_dir / self.config.project.cache_dir

    @property
    def results_url(self) -> str:
        """SQLAlchemy URL of the results database (``[project] results``)."""
        from ..store import store_url

        return store_url(self.config.project.results, self.base_dir)

    @property
    def llm_cache_url(self) -> str:
        """SQLAlchemy URL of the LLM response cache (``[llm] cache_path`` under the cache folder)."""
        from ..llm.settings import cache_url

        return cache_url(self.config.llm.cache_path, self.cache_dir)

    @functools.cached_property
    def context(self) -> ComponentContext:
        """The one component context of this project: paths, LLM runtime settings, registry, warnings."""
        from ..llm.settings import runtime_settings

        settings = {
            "llm": runtime_settings(self.config.llm, self.cache_dir, no_cache=self.no_cache),
            "results": self.results_url,  # the project's results database (the traces source reads it)
            # the [dataset] section as configured, for a system that replays what its source read (trace_replay)
            "dataset": {"source": self.config.dataset.source, "options": dict(self.config.dataset.options)},
        }
        return ComponentContext(
            project_dir=self.base_dir, cache_dir=self.cache_dir, registry=self.registry, settings=settings
        )

    def open_store(self, *, create: bool = True):
        """The results database (``[project] results``), opened with :func:`ragassay.store.open_store`; with
        ``create=False`` a missing database is a :class:`~ragassay.errors.StoreError` saying to run first."""
        from ..store import open_store

        return open_store(self.results_url, create=create, retry_s=self.config.project.results_retry_s)

    @functools.cached_property
    def dataset(self) -> ResolvedComponent:
        """The ``[dataset]`` source, resolved (nested components included)."""
        from .datasets import resolve_dataset

        return resolve_dataset(self.loaded, self.registry)

    def samples(self) -> Iterator[Sample]:
        """The dataset's samples, streamed: at most ``[dataset] limit``; question ids checked unique."""
        from .datasets import stream_samples

        return stream_samples(self.dataset, self.context, self.config.dataset.limit)

    def corpus(self) -> Corpus:
        """The documents retrieval runs over."""
        from .datasets import load_corpus

        corpus = load_corpus(self.loaded, self.registry, self.context, self.dataset)
        warn_large_documents(corpus, self.config.corpus.max_document_bytes, self.context)
        return corpus

    def require_systems(self) -> None:
        """Running needs at least one system (generating samples does not)."""
        if not self.config.systems:
            raise ConfigError(
                f"{self.loaded.where('systems')}: no systems declared: add at least one "
                "[systems.NAME] table (see: ragassay init)"
            )


def results_location(config: str | Path = ".", db: str | None = None) -> tuple[str, dict[str, Any]]:
    """The results database a reading command or notebook names: ``db`` (``--db``: a SQLite path, relative to the
    working directory, or a URL), else the project's at ``config``. Returns its URL and the options of
    :func:`ragassay.store.open_store` that read it: never created, transient errors retried for the project's
    ``[project] results_retry_s`` (60 s with ``db``)."""
    if db is not None:
        from ..store import store_url

        return store_url(db, Path.cwd()), {"create": False, "key": "--db"}
    project = Project(load_config(config))
    return project.results_url, {"create": False, "retry_s": project.config.project.results_retry_s}


def warn_large_documents(corpus: Corpus, limit: int, context: ComponentContext) -> None:
    """A warning (on the context: printed and stored with the run) for each document over ``limit`` bytes."""
    from ..text import MIB, text_bytes

    for document in corpus.documents:
        size = text_bytes([document.text], limit)
        if size > limit:
            context.warn(
                f"corpus: document '{document.id}' holds {size / MIB:.1f} MiB or more of text, over [corpus] "
                f"max_document_bytes = {limit:,}: every system keeps the corpus in memory; split the document "
                "or raise the limit"
            )
