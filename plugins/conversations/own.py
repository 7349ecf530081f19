"""The ``conversations_files`` dataset source: the user's own conversations from a JSONL or CSV file.

Two shapes (docs/conversations.md, "Your own conversations"):

One conversation per JSONL line::

    {"conversation_id": "c1", "turns": [
        {"speaker": "user", "text": "Who founded Acme?", "reference_answers": ["Ada Smith"],
         "reference_context_ids": ["acme.md"], "answerability": "answerable"},
        {"speaker": "agent", "text": "Ada Smith founded it in 1990."},
        {"speaker": "user", "text": "And when did she retire?", "answerability": "unanswerable"}],
     "topic": "companies"}

One turn per JSONL line or CSV row (``conversation_id``, ``turn``, ``speaker``, ``text``, then the optional
``reference_answers``, ``reference_contexts``, ``reference_context_ids``, ``answerability``)::

    conversation_id,turn,speaker,text,reference_answers,answerability
    c1,1,user,Who founded Acme?,Ada Smith,answerable
    c1,1,agent,Ada Smith founded it in 1990.,,
    c1,2,user,And when did she retire?,,unanswerable

``turn`` numbers the exchanges: the user's k-th turn and the agent's reply to it share ``turn = k`` (1, 2, 3, ...
without gaps; the agent's reply may be missing). In CSV, a list cell holds a JSON array or values separated by
``;``. Each user turn becomes one sample: ``question_id`` = ``conversation_id::turn``, ``history`` every earlier
turn (user and agent). The optional fields belong to user turns; other keys of a user turn (or of a conversation
line, for all its turns) are kept as sample attributes. Any problem is one :class:`ragassay.DatasetError` naming
the file, the line and the field.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import DatasetError, DatasetSource, Sample, Turn, describe_json_error, hookimpl, turn_id

#: The answerability labels a user turn may carry (Sample.answerability).
ANSWERABILITY = ("answerable", "unanswerable", "underspecified", "partial")
LIST_FIELDS = ("reference_answers", "reference_contexts", "reference_context_ids")
ROW_FIELDS = ("conversation_id", "turn", "speaker", "text")
_SPEAKERS = ("user", "agent")


class ConversationFilesOptions(BaseModel):
    """Options of the ``conversations_files`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The conversations file (.jsonl or .csv), relative to the project folder.")


class ConversationFilesSource(DatasetSource):
    """The user's own conversations (JSONL or CSV, one conversation or one turn per line): a sample per user turn."""

    name = "conversations_files"
    Options = ConversationFilesOptions

    def samples(self) -> Iterator[Sample]:
        """The user turns of every conversation, conversations in order of first appearance."""
        file = self.context.resolve(self.options.path)
        records = list(_records(file))
        if not records:
            raise DatasetError(f"{file} holds no conversation; check the path")
        whole = ["turns" in record for _, record in records]
        if any(whole) and not all(whole):
            line = records[whole.index(not whole[0])][0]
            raise DatasetError(
                f"{file}, line {line}: the file mixes conversation lines (with 'turns') and turn rows (with "
                "'speaker'); use one shape per file"
            )
        seen: dict[str, int] = {}
        groups = _conversations(records, file) if whole[0] else _grouped_rows(records, file)
        for cid, line, turns, shared in groups:
            if cid in seen:
                raise DatasetError(f"{file}, line {line}: conversation '{cid}' again (first on line {seen[cid]})")
            seen[cid] = line
            yield from _turn_samples(cid, turns, shared, file)


Located = tuple[int, str, dict[str, Any]]  # (line, where in the line, the turn's record)


def _conversations(records: list[tuple[int, dict]], file: Path) -> Iterator[tuple[str, int, list[Located], dict]]:
    """(id, line, turns, shared attributes) per conversation line."""
    for line, record in records:
        cid = _conversation_id(record, file, line)
        turns = record.pop("turns")
        if not isinstance(turns, list) or not turns:
            raise DatasetError(f"{file}, line {line}: field 'turns' must be a non-empty list of turns")
        located = []
        for index, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise DatasetError(f"{file}, line {line}: field 'turns[{index}]' must be an object (speaker, text)")
            located.append((line, f"turns[{index}].", turn))
        yield cid, line, located, record


def _grouped_rows(records: list[tuple[int, dict]], file: Path) -> Iterator[tuple[str, int, list[Located], dict]]:
    """(id, first line, turns in order, {}) per conversation of one-turn-per-row records."""
    groups: dict[str, list[tuple[int, int, dict]]] = {}
    for line, record in records:
        cid = _conversation_id(record, file, line)
        number = _whole_number(record.pop("turn", None), "turn", file, line)
        groups.setdefault(cid, []).append((line, number, record))
    for cid, rows in groups.items():
        ordered = sorted(rows, key=lambda row: (row[1], _speaker(row[2], file, row[0], "") == "agent"))
        _check_exchanges(cid, ordered, file)
        yield cid, rows[0][0], [(line, "", record) for line, _, record in ordered], {}


def _check_exchanges(cid: str, rows: list[tuple[int, int, dict]], file: Path) -> None:
    """Turns 1..n without gaps, one user row and at most one agent row each, the agent after the user."""
    expected = 1
    for index, (line, number, record) in enumerate(rows):
        speaker = record["speaker"]
        previous = rows[index - 1] if index else None
        if previous is not None and previous[1] == number:
            if speaker == "user" or previous[2]["speaker"] == "agent":
                raise DatasetError(
                    f"{file}, line {line}: field 'turn': conversation '{cid}' has two {speaker} rows for turn "
                    f"{number} (the other on line {previous[0]}); a turn has one user row and at most one agent row"
                )
            continue
        if number != expected or speaker != "user":
            what = f"turn {expected} is missing" if number != expected else f"turn {number} has no user row"
            raise DatasetError(
                f"{file}, line {line}: field 'turn': conversation '{cid}': {what}; number the exchanges 1, 2, 3, "
                "... (the user's row and the agent's reply share a number)"
            )
        expected += 1


def _turn_samples(cid: str, turns: list[Located], shared: dict[str, Any], file: Path) -> Iterator[Sample]:
    history: list[Turn] = []
    number = 0
    for line, where, record in turns:
        speaker = _speaker(record, file, line, where)
        text = record.get("text")
        if not isinstance(text, str) or not text.strip():
            raise DatasetError(f"{file}, line {line}: field '{where}text' must be a non-empty string, got {text!r}")
        if speaker == "user":
            number += 1
            yield _sample(cid, number, text, list(history), record, shared, (file, line, where))
        elif set(record) - {"speaker", "text"}:
            extra = ", ".join(sorted(set(record) - {"speaker", "text"}))
            raise DatasetError(
                f"{file}, line {line}: field '{where}{extra.split(', ')[0]}': an agent turn has only speaker and "
                f"text (got {extra}); references and answerability belong to the user turn they answer"
            )
        history.append(Turn(speaker=speaker, text=text))


def _sample(cid: str, number: int, text: str, history: list[Turn], record: dict, shared: dict, at: tuple) -> Sample:
    file, line, where = at
    fields: dict[str, Any] = {}
    for key in LIST_FIELDS:
        if key in record:
            fields[key] = _string_list(record[key], f"{where}{key}", file, line)
    label = record.get("answerability")
    if label is not None and label != "":
        if not isinstance(label, str) or label.strip().lower() not in ANSWERABILITY:
            raise DatasetError(
                f"{file}, line {line}: field '{where}answerability' must be one of {', '.join(ANSWERABILITY)} "
                f"(or empty), got {label!r}"
            )
        fields["answerability"] = label.strip().lower()
        fields["is_answerable"] = fields["answerability"] != "unanswerable"
    reserved = {"speaker", "text", "answerability", *LIST_FIELDS}
    attributes = {**shared, **{k: v for k, v in record.items() if k not in reserved}}
    for key in ("question_id", "question", "conversation_id", "turn", "history"):
        if key in attributes:
            raise DatasetError(f"{file}, line {line}: field '{where}{key}' is set by the conversation; remove it")
    try:
        return Sample(
            question_id=turn_id(cid, number),
            question=text,
            conversation_id=cid,
            turn=number,
            history=history,
            **fields,
            **attributes,
        )
    except ValueError as exc:
        raise DatasetError(f"{file}, line {line}: {' '.join(str(exc).split())[:300]}") from None


def _speaker(record: dict, file: Path, line: int, where: str) -> str:
    speaker = record.get("speaker")
    if speaker not in _SPEAKERS:
        raise DatasetError(f"{file}, line {line}: field '{where}speaker' must be 'user' or 'agent', got {speaker!r}")
    return speaker


def _conversation_id(record: dict, file: Path, line: int) -> str:
    cid = record.pop("conversation_id", None)
    if isinstance(cid, int) and not isinstance(cid, bool):
        cid = str(cid)
    if not isinstance(cid, str) or not cid.strip():
        raise DatasetError(f"{file}, line {line}: field 'conversation_id' must be a non-empty string, got {cid!r}")
    return cid.strip()


def _whole_number(value: Any, key: str, file: Path, line: int) -> int:
    try:
        number = int(value) if not isinstance(value, bool) and str(value).strip().isdigit() else None
    except (TypeError, ValueError):
        number = None
    if number is None or number < 1:
        raise DatasetError(f"{file}, line {line}: field '{key}' must be a whole number from 1, got {value!r}")
    return number


def _string_list(value: Any, key: str, file: Path, line: int) -> list[str]:
    """A list of strings: a JSON list, or (from CSV) a JSON array text or ';'-separated values."""
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                problem = describe_json_error(exc, column=False)
                raise DatasetError(f"{file}, line {line}: field '{key}' is not a JSON array ({problem})") from None
        else:
            return [item.strip() for item in text.split(";") if item.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise DatasetError(f"{file}, line {line}: field '{key}' must be a list of strings, got {value!r}")
    return value


def _records(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) of a .jsonl or .csv file (CSV: empty cells left out)."""
    if not file.is_file():
        raise DatasetError(f"conversations file not found: {file}; check the source's 'path'")
    suffix = file.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        raise DatasetError(f"{file}: unknown extension '{file.suffix}'; give a .jsonl or .csv conversations file")
    try:
        with file.open(encoding="utf-8-sig", newline="") as handle:
            yield from (_jsonl(handle, file) if suffix == ".jsonl" else _csv(handle, file))
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None


def _jsonl(handle, file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for line, text in enumerate(handle, start=1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{file}, line {line}: {describe_json_error(exc)}; fix the line") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{file}, line {line}: expected a JSON object, got {type(record).__name__}")
        yield line, record


def _csv(handle, file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.reader(handle)
    header = [name.strip() for name in next(reader, [])]
    missing = [name for name in ROW_FIELDS if name not in header]
    if missing:
        raise DatasetError(
            f"{file}, line 1: the header lacks {', '.join(missing)}; a conversations CSV has the columns "
            f"{', '.join(ROW_FIELDS)} (and optionally {', '.join(LIST_FIELDS)}, answerability)"
        )
    start = reader.line_num + 1
    try:
        for row in reader:
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise DatasetError(
                    f"{file}, line {line}: the row has {len(row)} cells but the header has {len(header)} columns; "
                    "quote cells that contain commas"
                )
            yield line, {key: value for key, value in zip(header, row) if value != ""}
    except csv.Error as exc:
        raise DatasetError(f"{file}, line {reader.line_num}: malformed CSV ({exc}); fix the quoting") from None


@hookimpl
def register_dataset_sources(register):
    """Register the conversations_files dataset source."""
    register(ConversationFilesSource)
