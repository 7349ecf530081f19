"""Component options as a person reads them: name, readable type, default (or "required"), description."""

from __future__ import annotations

import enum
import json
import types
import typing
from typing import Any


def option_rows(options_model) -> list[dict[str, str]]:
    """One dict per field of a pydantic options model: option, type, default, description (all text)."""
    return [
        {
            "option": name,
            "type": type_text(field.annotation),
            "default": default_text(field),
            "description": field.description or "",
        }
        for name, field in options_model.model_fields.items()
    ]


def type_text(annotation: Any) -> str:
    """``int``, ``list[str]``, ``'flat' | 'hnsw'``, ``float | None``: no ``<class ...>``, no typing internals."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is None or annotation is type(None):
        return "None"
    if origin is typing.Annotated:
        return type_text(args[0])
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_text(a) for a in args)
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{', '.join(type_text(a) for a in args)}]" if args else name
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def default_text(field) -> str:
    """The default as TOML-like text (``"required"`` when there is none)."""
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    return value_text(value)


def value_text(value: Any) -> str:
    """A default value as JSON text; pydantic models as their fields, enums as their values."""
    if value is None:
        return "None"
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return type(value).__name__
