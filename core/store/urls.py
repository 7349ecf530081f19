"""Results database URLs: from a config value to a URL, environment variables, redaction of passwords.

``[project] results`` (and ``--db``) is a SQLite path or any SQLAlchemy URL, and may name environment
variables (``${PGPASSWORD}`` or ``$PGPASSWORD``) that are expanded only when the database is opened. The text as
written is what runs store and what messages show; a literal password in it is shown and stored as ``***``.

>>> redact("postgresql+psycopg://me:secret@db.example/results")
'postgresql+psycopg://me:***@db.example/results'
>>> redact("postgresql+psycopg://me:${PGPASSWORD}@db.example/results")
'postgresql+psycopg://me:${PGPASSWORD}@db.example/results'
"""

from __future__ import annotations

import re
from pathlib import Path

from ..environment import RESULTS_KEY, VARIABLE, expand  # noqa: F401 - expand, RESULTS_KEY: re-exported


def store_url(results: str, base_dir: Path) -> str:
    """A SQLAlchemy URL from a config value: URLs are kept as written (variables unexpanded), paths become
    SQLite files under ``base_dir``."""
    if "://" in results:
        return results
    path = Path(results).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    return f"sqlite:///{path}"


def sqlite_file(url: str, key: str = RESULTS_KEY) -> Path | None:
    """The file of a plain SQLite file URL (``sqlite:///PATH``, no ``?`` options, not ``:memory:``), variables
    expanded; None for any other URL."""
    real = expand(url, key)
    if not real.startswith("sqlite:///") or "?" in real:
        return None
    path = Path(real.removeprefix("sqlite:///"))
    return None if not path.name or path.name == ":memory:" else path


def redact(url: str) -> str:
    """``url`` as it may be shown or stored: a literal password becomes ``***``; a password given as an
    environment variable (``${VAR}``) is kept as written. Paths and URLs without a password are unchanged."""
    if "://" not in url or "@" not in url:
        return url
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)
    if parsed.password is None or VARIABLE.fullmatch(str(parsed.password)):
        return url
    return parsed.render_as_string(hide_password=True)


def redact_text(text: str, url: str) -> str:
    """``text`` (a message, a stored config) with the password of ``url`` (expanded or not) replaced by ``***``."""
    from sqlalchemy.engine import make_url

    try:
        password = make_url(url).password
    except Exception:  # noqa: BLE001 - not a URL: nothing to hide
        return text
    if not password or VARIABLE.fullmatch(str(password)):
        return text
    return text.replace(str(password), "***")


def redact_config(config_json: str) -> str:
    """A stored config (JSON) with a literal password in ``[project] results`` replaced by ``***``."""
    import json

    try:
        config = json.loads(config_json)
    except ValueError:
        return config_json
    project = config.get("project") if isinstance(config, dict) else None
    results = project.get("results") if isinstance(project, dict) else None
    if not isinstance(results, str) or redact(results) == results:
        return config_json
    project["results"] = redact(results)
    return json.dumps(config, separators=(",", ":"))
