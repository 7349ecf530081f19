"""Labels as JSONL (``ragassay labels export/import``): one :class:`~ragassay.labels.Label` as JSON per line, so
labels collected elsewhere (another tool, a spreadsheet, a second machine) can be brought into a results store."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from pydantic import ValidationError

from ..errors import ConfigError, DatasetError
from ..text import describe_json_error
from .model import Label
from .rubrics import Rubric


def write_jsonl(labels: Iterable[Label], path: str | Path) -> int:
    """Write ``labels`` to ``path``, one per line, in a stable order (run, rubric, annotator, item, time);
    returns how many."""
    ordered = sorted(labels, key=lambda x: (x.run_id, x.rubric, x.annotator, x.item_key, x.labelled_at))
    with Path(path).open("w", encoding="utf-8") as out:
        for label in ordered:
            out.write(label.model_dump_json() + "\n")
    return len(ordered)


def read_jsonl(path: str | Path, rubrics: Mapping[str, Rubric] | None = None) -> list[tuple[str, Label]]:
    """The labels of a JSONL file as (``FILE:LINE``, label); blank lines are skipped.

    :param rubrics: rubric name -> rubric; when given, every label's rubric must be one of them, at the same
        version, with a value of its scale, and a pair (``systems``) exactly when the rubric is pairwise.

    Raises :class:`DatasetError` naming the file and line of the first bad line and what is wrong with it.
    """
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise DatasetError(f"labels file {path} does not exist") from None
    except IsADirectoryError:
        raise DatasetError(f"labels file {path} is a folder; give a JSONL file of labels") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"cannot read labels file {path}: {exc}") from exc
    labels = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        labels.append((where, _parse_line(line, where)))
        if rubrics is not None:
            check_rubric(labels[-1][1], rubrics, where)
    return labels


def _parse_line(line: str, where: str) -> Label:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{where}: {describe_json_error(exc)}; each line is one label as a JSON object") from None
    except RecursionError:
        raise DatasetError(f"{where}: JSON nested too deeply to read; a label is one flat JSON object") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: a label is a JSON object, got {type(data).__name__}")
    try:
        return Label.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'label'}: {e['msg']}" for e in exc.errors())
        fields = ", ".join(Label.model_fields)
        raise DatasetError(f"{where}: not a label ({problems}). A label has the fields {fields}") from None


def check_rubric(label: Label, rubrics: Mapping[str, Rubric], where: str) -> None:
    """Raise :class:`DatasetError` (naming ``where``) unless ``label`` fits its rubric in ``rubrics``."""
    rubric = rubrics.get(label.rubric)
    if rubric is None:
        known = ", ".join(sorted(rubrics))
        raise DatasetError(
            f"{where}: unknown rubric '{label.rubric}' (known: {known}); give its file with --rubric FILE"
        )
    if label.rubric_version != rubric.version:
        raise DatasetError(
            f"{where}: label of rubric '{rubric.name}' version {label.rubric_version}, but the rubric is version "
            f"{rubric.version}; give the matching rubric file with --rubric FILE"
        )
    try:
        rubric.index_of(label.value)
    except ConfigError as exc:
        raise DatasetError(f"{where}: {exc}") from None
    if rubric.pairwise != (label.systems is not None):
        wanted = "systems (first, second)" if rubric.pairwise else "system"
        raise DatasetError(f"{where}: a label of the {rubric.kind} rubric '{rubric.name}' names {wanted}")
