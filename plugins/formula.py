"""The ``formula`` metric: a derived metric, an arithmetic formula over other metrics of the same unit.

Example, the INFO thesis' comprehensive score (seeds/002, section 5.1, Eq. 5.1)::

    fullscore = (answer_relevancy + correctness + faithfulness) / 3 + context_relevancy

configured over whatever metrics measure those four aspects::

    [evaluation]
    metrics = [
        "token_recall", "k_precision", "context_mrr", "answer_relevance",
        { name = "formula", label = "full_score", options = {
            expression = "(relevancy + correctness + faithfulness) / 3 + context",
            inputs = { relevancy = "answer_relevance", correctness = "token_recall",
                       faithfulness = "k_precision", context = "context_mrr" },
            value_range = [0, 2] } },
    ]

Eq. 5.1 as printed ranges over [0, 2] although the thesis' text splits a full score of 1 evenly between
generation and retrieval (0.5 each); write ``((...) / 3 + context) / 2`` for the [0, 1] reading.

The expression may use numbers, the input names, ``+ - * /``, parentheses and ``min``, ``max``, ``abs``. An
input that is unscored for the unit makes the formula unscored (the reason names it); so does a division by
zero. Nothing is evaluated with ``eval``: the expression is parsed once into a small arithmetic tree.
"""

from __future__ import annotations

import ast
import operator
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import DerivedMetric, Unscored, hookimpl

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_FUNCTIONS = {"min": min, "max": max, "abs": abs}


class FormulaOptions(BaseModel):
    """Options of the formula metric."""

    model_config = ConfigDict(extra="forbid")

    expression: str = Field(description="Arithmetic over the input names: numbers, + - * /, (), min, max, abs.")
    inputs: dict[str, str] = Field(
        description="Name used in the expression -> label of a configured metric (a name alone maps to itself)."
    )
    direction: Literal["higher", "lower"] = Field("higher", description="Whether a higher value is better.")
    value_range: tuple[float | None, float | None] = Field(
        (None, None), description="Inclusive [low, high] of a value; null for an open end."
    )

    @model_validator(mode="after")
    def _parses(self) -> FormulaOptions:
        names = _check(_parse(self.expression))
        unknown = sorted(names - set(self.inputs))
        if unknown:
            raise ValueError(f"expression uses {', '.join(unknown)}, which 'inputs' does not map to a metric")
        return self


def _parse(expression: str) -> ast.expr:
    try:
        return ast.parse(expression, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"expression {expression!r} is not valid arithmetic: {exc.msg}") from None


def _check(node: ast.expr) -> set[str]:
    """The input names used by ``node``; raises ValueError for anything but arithmetic."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return set()
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _check(node.left) | _check(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _check(node.operand)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS:
        if node.keywords or not node.args:
            raise ValueError(f"{node.func.id}() takes positional arguments only")
        return set().union(*(_check(arg) for arg in node.args))
    raise ValueError(f"'{ast.unparse(node)}' is not allowed: use numbers, input names, + - * /, min, max, abs")


def _evaluate(node: ast.expr, values: dict[str, float]) -> float:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, values)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    return float(_FUNCTIONS[node.func.id](*(_evaluate(arg, values) for arg in node.args)))


class Formula(DerivedMetric):
    """A formula over other metrics of the same unit (e.g. the INFO thesis' full score, Eq. 5.1).

    Formula: the configured ``expression`` with each input name replaced by that metric's value for the unit.
    Source: INFO thesis (seeds/002), section 5.1, Eq. 5.1, as the motivating example. Direction and range:
    as configured (default higher is better, unbounded).
    """

    name = "formula"
    Options = FormulaOptions
    formula = "expression(inputs)"
    source = "seeds/002, Eq. 5.1 (example)"

    def __init__(self, options: BaseModel | None = None, **kwargs: Any):
        super().__init__(options, **kwargs)
        self._tree = _parse(self.options.expression)
        # per instance: the configured direction and range are what the runner checks and reports
        self.direction = self.options.direction
        self.value_range = tuple(self.options.value_range)

    @classmethod
    def declared(cls, options: FormulaOptions) -> tuple[str, tuple[float | None, float | None]]:
        return options.direction, tuple(options.value_range)

    def inputs(self) -> list[str]:
        return sorted(set(self.options.inputs.values()))

    def derive(self, values: dict[str, float | None]) -> float | Unscored:
        missing = sorted(name for name, label in self.options.inputs.items() if values.get(label) is None)
        if missing:
            labels = ", ".join(self.options.inputs[name] for name in missing)
            return Unscored(reason=f"input metric(s) unscored for this output: {labels}")
        try:
            return _evaluate(self._tree, {name: values[label] for name, label in self.options.inputs.items()})
        except ZeroDivisionError:
            return Unscored(reason=f"division by zero in {self.options.expression!r}")


@hookimpl
def register_metrics(register):
    """Register the formula metric."""
    register(Formula)
