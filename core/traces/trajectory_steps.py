"""A trajectory a user's system returned (a list of step objects) validated into :class:`~ragassay.Step`.

The return shape (python and http adapters, precomputed rows): ``"trajectory"`` is a list of objects with the
fields of :class:`~ragassay.Step`; ``id`` may be left out (then ``"s1"``, ``"s2"``, ... by position), ``kind`` is
required, ``usage`` is an object of token counts. Ids must be unique, and a ``parent_id`` must name an earlier
``agent`` step. Anything else is an error naming the step and the field.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..models import Step


def steps_from_dicts(items: Any, where: str) -> list[Step]:
    """``items`` (a list of Step objects or dicts) as validated steps; ValueError naming ``where``, the step's
    position and the field when one is wrong."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValueError(f"{where}: 'trajectory' must be a list of step objects, not {type(items).__name__}")
    steps: list[Step] = []
    for index, item in enumerate(items):
        steps.append(_step(item, index, where))
    check_links(steps, where)
    return steps


def check_links(steps: list[Step], where: str) -> None:
    """Ids unique, each ``parent_id`` an earlier agent step; ValueError naming the step otherwise."""
    agents: set[str] = set()
    seen: set[str] = set()
    for index, step in enumerate(steps):
        if step.id in seen:
            raise ValueError(f"{where}: trajectory[{index}] repeats the step id '{step.id}'; give each step its own id")
        if step.parent_id is not None and step.parent_id not in agents:
            raise ValueError(
                f"{where}: trajectory[{index}] ('{step.id}') names parent_id '{step.parent_id}', which is no earlier "
                "step of kind 'agent'"
            )
        seen.add(step.id)
        if step.kind == "agent":
            agents.add(step.id)


def _step(item: Any, index: int, where: str) -> Step:
    if isinstance(item, Step):
        return item
    if not isinstance(item, dict):
        raise ValueError(f"{where}: trajectory[{index}] must be an object, not {type(item).__name__}")
    fields = dict(item)
    if fields.get("id") in (None, ""):
        fields["id"] = f"s{index + 1}"
    else:
        fields["id"] = str(fields["id"])
    try:
        return Step.model_validate(fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "step"
        raise ValueError(f"{where}: trajectory[{index}].{field}: {error['msg']}") from None
