"""The shipped operators, registered on import (see :mod:`.base`): import this module to list them all."""

from __future__ import annotations

from . import context_ops  # noqa: F401 - registers distractors, drop_gold, reorder, truncate
from .base import OPERATORS, Case, Operator, Outcome, register_operator

__all__ = ["OPERATORS", "Case", "Operator", "Outcome", "register_operator"]
