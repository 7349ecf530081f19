"""Results-store backends, picked by the scheme of ``[project] results`` (:func:`ragassay.store.open_store`).

A URL whose scheme has a registered backend is opened by it; every other URL (``sqlite:///...``,
``postgresql+psycopg://...``, a path) by the SQLAlchemy store. A backend is a callable
``opener(url, *, create, key, retry_s)`` returning an object with the methods of
:class:`~ragassay.store.protocols.ResultsWriter` and :class:`~ragassay.store.protocols.ResultsReader`.

Register one in code::

    from ragassay.store import register_backend
    register_backend("memory", open_memory_store)

or from a pip-installed package, by entry point (loaded the first time its scheme is opened)::

    [project.entry-points."ragassay.stores"]
    memory = "my_package.store:open_memory_store"
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import StoreError

#: The entry-point group of store backends (name: the URL scheme it opens).
ENTRY_POINT_GROUP = "ragassay.stores"
_SCHEME = re.compile(r"^[a-z][a-z0-9.-]*$")
_OPENERS: dict[str, Callable[..., Any]] = {}
_LOOKED_UP: set[str] = set()  # schemes whose entry points were read (once per process)


def register_backend(scheme: str, opener: Callable[..., Any]) -> None:
    """Open URLs ``<scheme>://...`` (and ``<scheme>+<driver>://...``) with ``opener``.

    :raises ValueError: ``scheme`` is not a lowercase URL scheme, or another opener already has it (call
        :func:`unregister_backend` first to replace it).
    """
    if not _SCHEME.match(scheme):
        raise ValueError(f"store backend scheme {scheme!r} is not a lowercase URL scheme (letters, digits, . -)")
    if _OPENERS.get(scheme, opener) is not opener:
        raise ValueError(f"a store backend is already registered for '{scheme}://'; unregister it first")
    _OPENERS[scheme] = opener


def unregister_backend(scheme: str) -> None:
    """Forget the backend of ``scheme`` (nothing happens when there is none)."""
    _OPENERS.pop(scheme, None)


def backend_for(url: str) -> Callable[..., Any] | None:
    """The opener registered (in code or by entry point) for ``url``'s scheme, or None (the SQLAlchemy store)."""
    if "://" not in url:
        return None
    scheme = url.split("://", 1)[0].split("+", 1)[0].lower()
    if scheme not in _OPENERS and scheme not in _LOOKED_UP:
        _LOOKED_UP.add(scheme)
        found = _entry_point(scheme)
        if found is not None:
            _OPENERS[scheme] = found
    return _OPENERS.get(scheme)


def _entry_point(scheme: str) -> Callable[..., Any] | None:
    from ..entry_points import installed

    for entry in installed(ENTRY_POINT_GROUP, scheme):
        try:
            return entry.load()
        except Exception as exc:  # a broken package: say which, never a traceback
            raise StoreError(
                f"the results store backend for '{scheme}://' ({entry.value}, entry point group "
                f"{ENTRY_POINT_GROUP}) cannot be loaded: {type(exc).__name__}: {exc}. Reinstall the package "
                "that provides it."
            ) from None
    return None
