"""API keys: read from the environment at first use, never stored, scrubbed from every message.

A key lives only in the environment and inside the provider's client object. Options hold the *name* of the
environment variable (``api_key_env``), so configs, run specs and the results database never see a key.
Every error message that leaves the LLM layer passes through :func:`scrub`.
"""

from __future__ import annotations

import os
import re

from ..errors import ProviderError

#: Shapes of secrets worth hiding even when we do not know the value (provider keys, bearer tokens).
_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{6,}"),
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9_\-.=]{6,}"),
    re.compile(r"(?i)\b(api[-_]?key|x-api-key|authorization)(\"?\s*[:=]\s*\"?)[^\s\"',}]{6,}"),
]
_REDACTED = "[redacted]"
_known: set[str] = set()


def read_key(env_name: str, backend: str, *, required: bool = True) -> str | None:
    """The key in environment variable ``env_name`` (remembered only so it can be scrubbed).

    Raises :class:`ProviderError` naming the variable (never a value) when it is required and unset.
    """
    value = os.environ.get(env_name, "").strip()
    if not value:
        if required:
            raise ProviderError(
                f"{backend}: no API key: set the environment variable {env_name} "
                f"(or name another one with the api_key_env option)"
            )
        return None
    if len(value) >= 6:
        _known.add(value)
    return value


def scrub(text: str, *secrets: str | None) -> str:
    """``text`` with anything shaped like a key, every known key and every given secret replaced.

    Shapes go first and again last: a known short key that is the start of a longer key-shaped string must not
    leave the rest of that string behind.
    """
    text = _scrub_shapes(text)
    for secret in sorted({*(s for s in secrets if s), *_known}, key=len, reverse=True):
        text = text.replace(secret, _REDACTED)
    return _scrub_shapes(text)


def _scrub_shapes(text: str) -> str:
    text = _PATTERNS[0].sub(lambda m: f"{m.group(1)}-{_REDACTED}", text)
    text = _PATTERNS[1].sub(lambda m: f"{m.group(1)} {_REDACTED}", text)
    return _PATTERNS[2].sub(lambda m: f"{m.group(1)}{m.group(2)}{_REDACTED}", text)
