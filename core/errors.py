"""The ragassay error tree.

Every error a user can cause derives from :class:`RagassayError`. The CLI prints these as one line
(what went wrong, where, what to do) and exits with code 2; ``--debug`` shows the traceback.

::

    RagassayError
    ├── ConfigError              a config file or value is invalid
    ├── PluginError              a plugin failed to load or registered something invalid
    ├── ComponentNotFoundError   a config names a component nobody registered
    ├── MissingDependencyError   an optional dependency (an extra) is not installed
    ├── StoreError               the results database cannot be used
    │   └── StoreUnavailableError  it failed for a reason outside ragassay (disk full, read-only, server gone)
    ├── DatasetError             a dataset or corpus file is malformed
    └── ProviderError            a model provider failed after retries
"""

from __future__ import annotations


class RagassayError(Exception):
    """Base class of every error ragassay reports to a user without a traceback."""


class ConfigError(RagassayError):
    """A configuration file or value is invalid.

    The message names the file, the key path, the bad value and what is allowed.
    """


class PluginError(RagassayError):
    """A plugin failed to load, or registered an invalid or duplicate component."""


class ComponentNotFoundError(ConfigError):
    """A configuration names a component that no installed plugin registered."""


class MissingDependencyError(RagassayError):
    """An optional dependency is missing; the message names the extra to install."""


class StoreError(RagassayError):
    """The results database cannot be opened, migrated or read."""


class LeaseHeldError(StoreError):
    """Another live process holds the lease of this run (the message says who and what to do)."""


class StoreUnavailableError(StoreError):
    """The results database failed for a reason outside ragassay: a full disk, a read-only file, a denied
    permission, a server that stayed away past the retry deadline. The message names the database (password
    redacted), the cause and the fix; what was stored before is intact and a re-run resumes."""


class DatasetError(RagassayError):
    """A dataset or corpus source is missing or malformed (the message gives file and line)."""


class ProviderError(RagassayError):
    """A model provider call failed after its retries."""


def require(module: str, extra: str, purpose: str = ""):
    """Import ``module`` on first use, or raise :class:`MissingDependencyError` naming the extra.

    >>> np = require("numpy", "local")  # doctest: +SKIP
    """
    import importlib
    import sys

    if module in sys.modules:
        return sys.modules[module]
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        what = f" for {purpose}" if purpose else ""
        raise MissingDependencyError(
            f"{module} is required{what} but is not installed ({exc}). Install it with: pip install 'ragassay[{extra}]'"
        ) from exc
