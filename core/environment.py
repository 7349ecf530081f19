"""Values that name environment variables: ``${VAR}`` or ``$VAR`` in a URL (a results database, the response
cache), expanded only when it is opened, so the secret is never written into a config, a stored run or a message.
"""

from __future__ import annotations

import os
import re

from .errors import ConfigError

#: Where a results URL is written, named in the error about a variable that is not set.
RESULTS_KEY = "[project] results"
VARIABLE = re.compile(r"\$(?:\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}|(?P<bare>[A-Za-z_][A-Za-z0-9_]*))")


def expand(url: str, key: str = RESULTS_KEY) -> str:
    """``url`` with ``${VAR}`` / ``$VAR`` replaced by the environment's values.

    :param key: where the URL was written, named in the error.
    :raises ConfigError: a variable is not set.
    """

    def value(match: re.Match) -> str:
        name = match.group("braced") or match.group("bare")
        if name not in os.environ:
            raise ConfigError(
                f"{key} names the environment variable {name}, which is not set. Set it (export {name}=...) "
                f"before running, or write the URL without it."
            )
        return os.environ[name]

    return VARIABLE.sub(value, url)
