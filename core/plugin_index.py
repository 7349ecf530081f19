"""The plugin index: which components each installed entry point registered, so a process imports only the
plugins it uses.

Loading every plugin costs a fifth of a second (36 modules and what they import) before anything runs. The
process-wide host (:func:`ragassay.plugin_manager.get_plugin_host`) therefore reads this index, loads an entry
point only when a component it registered is looked up, and loads all of them when anything lists components,
reports plugins, or looks up a name the index does not know. Loading is always the real thing: the index only
decides *when* a plugin is imported, never what it registers. A stale index (a plugin edited in place without a
new version) can therefore only cost a full load, never a wrong component:

- a name the index maps to a plugin that no longer registers it, or a name it does not know, loads everything;
- an entry point the index has not seen (a new install, a new version) is loaded at once, and the index learns it;
- a plugin that failed to load is never indexed, so it is tried, and reported, on every start.

An entry point is identified by its name, its target (``module:attr``), and its distribution's name and version.
The index is a JSON file per Python environment under the user's cache folder (``$XDG_CACHE_HOME/ragassay``,
else ``~/.cache/ragassay``); ``RAGASSAY_PLUGIN_INDEX`` names another file, or ``off`` turns the index off (every
plugin is loaded at start). A file that cannot be read or written only means plugins are loaded at start.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

FORMAT = 1


def index_path() -> Path | None:
    """Where this environment's index lives; None when ``RAGASSAY_PLUGIN_INDEX=off``."""
    configured = os.environ.get("RAGASSAY_PLUGIN_INDEX", "").strip()
    if configured.lower() in ("off", "0", "false", "no"):
        return None
    if configured:
        return Path(configured).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ragassay"
    environment = hashlib.sha256(sys.prefix.encode()).hexdigest()[:16]
    return base / f"plugin-index-{environment}.json"


def entry_key(name: str, target: str, distribution: str, version: str) -> str:
    """An entry point's identity in the index: ``name=module:attr@distribution==version``."""
    return f"{name}={target}@{distribution}=={version}"


def read_index(path: Path | None) -> dict[str, list[str]] | None:
    """The index at ``path`` (entry key -> ``["kind:name", ...]``), or None when there is none usable."""
    if path is None:
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        return None
    entries = data["entries"]
    if not all(isinstance(v, list) and all(isinstance(c, str) for c in v) for v in entries.values()):
        return None
    return entries


def write_index(path: Path | None, entries: dict[str, list[str]]) -> None:
    """Replace the index at ``path`` atomically; any failure to write is ignored (the next start loads all)."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".plugin-index-", delete=False) as out:
            json.dump({"format": FORMAT, "entries": entries}, out, sort_keys=True)
        os.replace(out.name, path)
    except OSError:
        try:
            os.unlink(out.name)
        except (OSError, NameError):
            pass
