"""People's labels as the meta-evaluation reads them: the labels export format (one label per JSONL line), the
results store's labels, and the kind and scale of each rubric.

A label line holds ``run_id``, ``sample_id`` (the question id), ``system`` (binary and ordinal rubrics) or
``systems`` ([first, second] as shown, pairwise rubrics), ``rubric``, ``rubric_version``, ``annotator``, ``value``
and ``labelled_at`` (epoch seconds), optionally ``output_digest`` (the answer it judged) and ``probability`` (an
active queue's probability of drawing the item); the same fields as ``ragassay.labels.Label``. Of several labels by one
annotator for one item, the latest counts (as after an undo in the labelling app). A pairwise item is the
unordered pair: its value is read as rating the system later in name order against the other
(:attr:`HumanLabel.item_value`), whichever order the two answers were shown in.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..text import describe_json_error

KINDS = ("binary", "ordinal", "pairwise")
#: The shipped rubrics (core/rubrics/*.toml), used when the rubric loader is not available.
SHIPPED = {
    "correct": ("binary", (0.0, 1.0)),
    "faithful": ("ordinal", (1.0, 2.0, 3.0, 4.0, 5.0)),
    "preference": ("pairwise", (-2.0, -1.0, 0.0, 1.0, 2.0)),
}
REQUIRED = ("run_id", "sample_id", "rubric", "annotator", "value")


@dataclasses.dataclass(frozen=True)
class HumanLabel:
    """One person's label of one item (the fields of the labels export format)."""

    run_id: str
    sample_id: str
    system: str | None
    systems: tuple[str, str] | None
    rubric: str
    rubric_version: int
    annotator: str
    value: float
    labelled_at: float = 0.0
    output_digest: str | None = None  # the digest of the answer(s) it judged (ragassay.labels.digest)
    probability: float | None = None  # an active queue's probability of drawing the item; None: random order

    @property
    def item(self) -> tuple:
        """What was labelled: (system, sample_id), or (sample_id, a, b) for a preference, a and b the two systems
        in name order: a pair is unordered, so the same two answers shown either way round are one item."""
        return (self.sample_id, *sorted(self.systems)) if self.systems else (self.system, self.sample_id)

    @property
    def item_value(self) -> float:
        """The value as it rates :attr:`item`: a preference rates the second answer shown against the first, so
        one shown in the other order than the item's (b first) is negated to rate b against a."""
        if self.systems and tuple(self.systems) != tuple(sorted(self.systems)):
            return -self.value
        return self.value

    @classmethod
    def of(cls, label) -> HumanLabel:
        """From any object with the label fields (``ragassay.labels.Label`` of the store)."""
        systems = getattr(label, "systems", None)
        return cls(
            str(label.run_id),
            str(label.sample_id),
            getattr(label, "system", None),
            tuple(systems) if systems else None,
            str(label.rubric),
            int(getattr(label, "rubric_version", 1) or 1),
            str(label.annotator),
            float(label.value),
            float(getattr(label, "labelled_at", 0.0) or 0.0),
            getattr(label, "output_digest", None),
            _probability(getattr(label, "probability", None)),
        )

    def as_label(self):
        """As a :class:`ragassay.labels.Label` (the model :func:`ragassay.labels.reuse.reusable_labels` reads)."""
        from ..labels import Label

        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return Label(**fields)


def _probability(value: Any) -> float | None:
    """A label's drawing probability: None, or a number in (0, 1] (anything else is a ValueError)."""
    if value is None:
        return None
    p = float(value)
    if not 0.0 < p <= 1.0:
        raise ValueError(f"probability must lie in (0, 1] (an active queue's probability of drawing it), got {value}")
    return p


@dataclasses.dataclass(frozen=True)
class Rubric:
    """What the meta-evaluation needs of a rubric: its kind and its ordered scale."""

    name: str
    kind: str
    values: tuple[float, ...]


def is_label_export(path: Path) -> bool:
    """True when ``path`` is a JSONL file in the labels export format (its first row has annotator and rubric)."""
    if path.suffix.lower() == ".csv":
        return False
    try:
        with path.open(encoding="utf-8") as lines:
            first = next((line for line in lines if line.strip()), "")
        row = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(row, dict) and "annotator" in row and "rubric" in row


def read_label_export(path: Path) -> list[HumanLabel]:
    """Every label of a labels export file; a line without a required field is a ConfigError naming it."""
    labels = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: {describe_json_error(exc)}") from None
        missing = [f for f in REQUIRED if not isinstance(row, dict) or row.get(f) in (None, "")]
        if not missing and not (row.get("system") or row.get("systems")):
            missing = ["system (or systems for a preference)"]
        if missing:
            raise ConfigError(f"{path}:{number}: a label needs {', '.join(missing)} (the labels export format)")
        try:
            labels.append(HumanLabel.of(_Row(row)))
            labels[-1].as_label()  # the fields a label has (a digest of 32 hex characters, ...)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{path}:{number}: {_short(exc)}") from None
    if not labels:
        raise ConfigError(f"labels file {path} has no rows")
    return labels


def _short(exc: Exception) -> str:
    """A validation error as one line: its first problem."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{'.'.join(map(str, first['loc'])) or 'label'}: {first['msg']}"
    return str(exc)


class _Row:
    def __init__(self, row: dict):
        self.__dict__.update(row)


def latest(labels: Iterable[HumanLabel]) -> list[HumanLabel]:
    """The latest label of each (rubric, annotator, item); ties in time keep the later one."""
    out: dict[tuple, HumanLabel] = {}
    for label in labels:
        key = (label.rubric, label.annotator, label.item)
        if key not in out or label.labelled_at >= out[key].labelled_at:
            out[key] = label
    return list(out.values())


def stored_labels(labels: Iterable[Any]) -> list[HumanLabel]:
    """A run's labels as the results store keeps them (:func:`ragassay.results.read_labels`), as HumanLabels."""
    return [HumanLabel.of(label) for label in labels]


def rubric_of(name: str, given: Mapping[str, Rubric] | None = None) -> Rubric:
    """The rubric ``name``: one of ``given`` (rubric files the user named, :func:`rubric_files`), a shipped one, or
    a rubric TOML file when ``name`` is its path; an unknown rubric is a ConfigError that says how to name its
    file."""
    if given and name in given:
        return given[name]
    if name not in SHIPPED and _is_file(name):
        return _load(name)
    if name not in SHIPPED:
        raise ConfigError(
            f"unknown rubric '{name}': not a shipped rubric ({', '.join(SHIPPED)}); a custom rubric's labels are "
            f"read with its file: --rubric path/to/{name}.toml (the file given to labels import --rubric)"
        )
    kind, values = SHIPPED[name]
    return Rubric(name, kind, values)


def rubric_files(choices: Iterable[str]) -> tuple[list[str], dict[str, Rubric]]:
    """(rubric names, definitions) of ``--rubric`` choices: a name selects a rubric; a path to a rubric TOML file
    (``ragassay.labels.load_rubric``) selects it by its name and defines it (a custom rubric)."""
    names, given = [], {}
    for choice in choices:
        if _is_file(choice):
            rubric = _load(choice)
            given[rubric.name] = rubric
            names.append(rubric.name)
        else:
            names.append(choice)
    return names, given


def _is_file(choice: str) -> bool:
    return choice.endswith(".toml") or Path(choice).is_file()


def _load(path: str) -> Rubric:
    """A rubric TOML file through the labelling workflow's loader (a missing or invalid file is a ConfigError)."""
    from ..labels import load_rubric

    loaded = load_rubric(Path(path))
    return Rubric(str(loaded.name), str(loaded.kind), tuple(float(v) for v in loaded.values))
