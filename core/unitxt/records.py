"""Unitxt's RAG task layout as JSONL: read a dataset with predictions, turn it into samples, write it back.

One JSON object per line with the fields of Unitxt's RAG task (seeds/004, "RAG Task Definition"):

* inputs: ``question`` (required), ``question_id`` (default ``q<line>``), ``metadata_field``;
* outputs (the predictions): ``contexts``, ``contexts_ids`` (also read as ``contexts_id``, the seed's spelling,
  or ``context_ids``, Unitxt's catalog spelling), ``answer``;
* references: ``reference_answers``, ``reference_contexts``, ``reference_context_ids``, ``is_answerable_label``.

Lists hold strings; ids may be numbers and are read as strings. A Unitxt user brings such a file in with
``ragassay unitxt import`` (a project whose dataset is the file and whose system replays its predictions) or
scores it directly with ``ragassay unitxt score``; ``ragassay unitxt export`` writes a stored run in the same
layout with ragassay's instance scores.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..models import Sample
from ..text import describe_json_error

CONTEXT_ID_FIELDS = ("contexts_ids", "contexts_id", "context_ids")
LIST_FIELDS = ("contexts", "reference_answers", "reference_contexts", "reference_context_ids")
TEXT_FIELDS = ("question", "question_id", "metadata_field", "answer")


@dataclasses.dataclass(frozen=True)
class UnitxtRecord:
    """One line of a Unitxt RAG JSONL file (predictions may be absent: ``answer`` None, empty contexts)."""

    question: str
    question_id: str
    line: int
    metadata_field: str = ""
    contexts: tuple[str, ...] = ()
    contexts_ids: tuple[str, ...] = ()
    answer: str | None = None
    reference_answers: tuple[str, ...] = ()
    reference_contexts: tuple[str, ...] = ()
    reference_context_ids: tuple[str, ...] = ()
    is_answerable_label: bool | None = None

    @property
    def has_prediction(self) -> bool:
        """Whether the line carries an answer (the contexts may legitimately be empty)."""
        return self.answer is not None


def read_unitxt(path: str | Path) -> list[UnitxtRecord]:
    """All records of a Unitxt RAG JSONL file; a malformed line raises :class:`DatasetError` naming file and line."""
    path = Path(path)
    if path.is_dir():
        raise DatasetError(f"{path} is a folder; give a JSONL file in Unitxt's RAG task layout (docs/unitxt.md).")
    if not path.is_file():
        raise DatasetError(f"{path}: no such file. Give a JSONL file in Unitxt's RAG task layout (docs/unitxt.md).")
    records, seen = [], {}
    for line_no, row in _rows(path):
        record = parse_record(row, f"{path}, line {line_no}", line_no)
        if record.question_id in seen:
            raise DatasetError(
                f"{path}, line {line_no}: question_id {record.question_id!r} already on line "
                f"{seen[record.question_id]}; every question needs its own id."
            )
        seen[record.question_id] = line_no
        records.append(record)
    if not records:
        raise DatasetError(f"{path}: no records (one JSON object per line expected).")
    return records


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}, line {line_no}: {describe_json_error(exc)}.") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{path}, line {line_no}: a JSON object is expected, not {type(row).__name__}.")
            yield line_no, row


def parse_record(row: dict[str, Any], where: str, line: int) -> UnitxtRecord:
    """One record from a decoded JSON object; field types are checked with messages naming the field."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise DatasetError(f"{where}: 'question' must be a non-empty string.")
    ids_field = next((name for name in CONTEXT_ID_FIELDS if name in row), CONTEXT_ID_FIELDS[0])
    fields = {name: _string_list(row.get(name), name, where) for name in LIST_FIELDS}
    fields["contexts_ids"] = _string_list(row.get(ids_field), ids_field, where)
    if fields["contexts_ids"] and len(fields["contexts_ids"]) != len(fields["contexts"]):
        raise DatasetError(
            f"{where}: {len(fields['contexts'])} contexts but {len(fields['contexts_ids'])} {ids_field}; "
            "give one id per context (or none)."
        )
    answer = row.get("answer")
    if answer is not None and not isinstance(answer, str):
        raise DatasetError(f"{where}: 'answer' must be a string, not {type(answer).__name__}.")
    label = row.get("is_answerable_label")
    if label is not None and not isinstance(label, bool):
        raise DatasetError(f"{where}: 'is_answerable_label' must be true or false, not {label!r}.")
    metadata = row.get("metadata_field", "")
    return UnitxtRecord(
        question=question,
        question_id=str(row.get("question_id") if row.get("question_id") not in (None, "") else f"q{line}"),
        line=line,
        metadata_field="" if metadata is None else str(metadata),
        answer=answer,
        is_answerable_label=label,
        **fields,
    )


def _string_list(value: Any, name: str, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise DatasetError(f"{where}: '{name}' must be a list, not {type(value).__name__}.")
    for item in value:
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            raise DatasetError(f"{where}: '{name}' must hold strings, found {item!r}.")
    return tuple(str(item) for item in value)


def record_to_sample(record: UnitxtRecord) -> Sample:
    """The ragassay sample of a record: references, answerability, and ``metadata_field`` kept in metadata."""
    answerable = {} if record.is_answerable_label is None else {"is_answerable": record.is_answerable_label}
    return Sample(
        question_id=record.question_id,
        question=record.question,
        reference_answers=list(record.reference_answers),
        reference_contexts=list(record.reference_contexts),
        reference_context_ids=list(record.reference_context_ids),
        metadata={"metadata_field": record.metadata_field} if record.metadata_field else {},
        **answerable,
    )


def sample_to_record(sample: Sample, answer: str | None, contexts: list[str], context_ids: list[str]) -> dict[str, Any]:
    """A sample and one system's output as a Unitxt RAG task record (the inverse of :func:`record_to_sample`)."""
    return {
        "question": sample.question,
        "question_id": sample.question_id,
        "metadata_field": str(sample.metadata.get("metadata_field", "")),
        "contexts": list(contexts),
        "contexts_ids": list(context_ids),
        "answer": answer,
        "reference_answers": list(sample.reference_answers),
        "reference_contexts": list(sample.reference_contexts),
        "reference_context_ids": list(sample.reference_context_ids),
        "is_answerable_label": sample.is_answerable,
    }
