"""Rubrics as data: what an annotator is asked, the values they may give, a label and description per value.

Shipped rubrics live in ``ragassay/rubrics/*.toml`` (``correct``: binary 0/1; ``faithful``: ordinal 1..5;
``preference``: pairwise -2..2, second answer much worse .. much better); a team's own rubric is a TOML file of
the same shape::

    name = "helpful"
    version = 1
    kind = "ordinal"            # binary | ordinal | pairwise
    prompt = "How helpful is the answer?"
    values = [1, 2, 3]
    labels = ["not", "somewhat", "very"]
    descriptions = ["...", "...", "..."]

In the labelling queue, number key *n* gives the *n*-th value.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SHIPPED_RUBRICS = ("correct", "faithful", "preference")
MAX_VALUES = 9  # number keys 1..9


class Rubric(BaseModel):
    """A labelling scale: name and version (stored with every label), kind, values and their meaning."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="Stored with every label.")
    version: int = Field(ge=1, description="Bump it when the meaning of a value changes.")
    kind: Literal["binary", "ordinal", "pairwise"] = Field(
        description="binary (values 0, 1), ordinal (ordered values), pairwise (two answers; values symmetric "
        "around 0, rating the second answer against the first)."
    )
    prompt: str = Field(min_length=1, description="The question the annotator answers for each item.")
    values: list[float] = Field(description=f"The values, increasing; 2 to {MAX_VALUES} (number keys 1..9).")
    labels: list[str] = Field(description="A short label per value.")
    descriptions: list[str] = Field(description="What each value means.")

    @model_validator(mode="after")
    def _consistent(self) -> Rubric:
        if not 2 <= len(self.values) <= MAX_VALUES:
            raise ValueError(
                f"values: give 2 to {MAX_VALUES} values (number keys 1..{MAX_VALUES}), got {len(self.values)}"
            )
        if any(b <= a for a, b in zip(self.values, self.values[1:])):
            raise ValueError(f"values must increase, got {self.values}")
        if not len(self.labels) == len(self.descriptions) == len(self.values):
            raise ValueError("labels and descriptions need one entry per value")
        if self.kind == "binary" and self.values != [0, 1]:
            raise ValueError(f"a binary rubric has values [0, 1], got {self.values}")
        if self.kind == "pairwise" and self.values != [-v for v in reversed(self.values)]:
            raise ValueError(f"a pairwise rubric's values are symmetric around 0, got {self.values}")
        return self

    @property
    def pairwise(self) -> bool:
        """Whether an item is two answers side by side."""
        return self.kind == "pairwise"

    def label_of(self, value: float) -> str:
        """The label of one of the values; a value outside the scale is a :class:`ConfigError`."""
        return self.labels[self.index_of(value)]

    def index_of(self, value: float) -> int:
        """The position of ``value`` among the values (its number key minus one)."""
        try:
            return self.values.index(float(value))
        except ValueError:
            shown = ", ".join(f"{v:g}" for v in self.values)
            raise ConfigError(f"{value:g} is not a value of rubric '{self.name}' (its values: {shown})") from None


def load_rubric(name_or_path: str | Path) -> Rubric:
    """A shipped rubric by name (``correct``, ``faithful``, ``preference``) or a rubric TOML file by path."""
    name = str(name_or_path)
    if name in SHIPPED_RUBRICS:
        text = resources.files("ragassay").joinpath("rubrics", f"{name}.toml").read_text(encoding="utf-8")
        return _parse(text, f"shipped rubric {name}")
    path = Path(name_or_path)
    if path.is_dir():
        raise ConfigError(f"rubric {name}: {path} is a folder; give a shipped rubric's name or a rubric TOML file")
    if not path.is_file():
        raise ConfigError(
            f"unknown rubric '{name}': neither a shipped rubric ({', '.join(SHIPPED_RUBRICS)}) nor a rubric file"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read rubric file {path}: {exc}") from exc
    return _parse(text, str(path))


def _parse(text: str, where: str) -> Rubric:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"rubric {where} is not valid TOML: {exc}") from exc
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'rubric'}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"rubric {where} is invalid: {problems}") from exc
