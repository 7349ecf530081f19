"""The shipped operators, registered on import (see :mod:`.base`), and the lookup by name."""

from __future__ import annotations

from ragassay import ConfigError

from . import context_ops, counterfactual, injection, question_ops  # noqa: F401 - registers them
from .base import OPERATORS, Case, Operator, Outcome, register_operator

__all__ = ["OPERATORS", "Case", "Operator", "Outcome", "operator_class", "register_operator"]


def operator_class(name: str) -> type[Operator]:
    """The operator registered as ``name``; a ConfigError lists the registered ones."""
    try:
        return OPERATORS[name]
    except KeyError:
        raise ConfigError(f"no perturbation operator '{name}'. Operators: {', '.join(sorted(OPERATORS))}") from None
