"""Analysis results as plain JSON data: every dataclass, pydantic model and numpy number made JSON-ready.

The analyses return dataclasses; ``--format json`` prints ``jsonable(result)``. A non-finite float becomes None
(JSON has no NaN), a tuple a list, a dict key a string.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any


def jsonable(value: Any) -> Any:
    """``value`` as nested dicts, lists, strings, numbers, booleans and None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in getattr(type(value), "__json_properties__", ()):
            data[name] = jsonable(getattr(value, name))
        return data
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    return value
