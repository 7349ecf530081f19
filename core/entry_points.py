"""Installed entry points, read once per process: the plugin host and the store backends both look theirs up
here, instead of each reading every installed distribution's metadata (about 15 ms each).

The list is read again when ``sys.path`` has changed since (a folder added for a plugin's tests, say). A package
installed into a folder already on the path while the process runs is seen by the next process, as plugins
already were (the process-wide plugin host is made once).
"""

from __future__ import annotations

import sys
import threading
from importlib import metadata

_lock = threading.Lock()
_read: tuple[tuple[str, ...], metadata.EntryPoints] | None = None


def installed(group: str, name: str | None = None) -> list[metadata.EntryPoint]:
    """The installed entry points of ``group`` (with ``name``: only those of that name)."""
    global _read
    with _lock:
        path = tuple(sys.path)
        if _read is None or _read[0] != path:
            _read = (path, metadata.entry_points())
        found = _read[1].select(group=group)
    return [ep for ep in found if name is None or ep.name == name]
