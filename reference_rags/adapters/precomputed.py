"""``precomputed`` adapter: outputs your system already produced, from a JSONL or CSV file.

Rows carry the Unitxt RAG output fields (question_id, answer, contexts, contexts_id/context_ids) and are
joined to the samples by question_id. A sample with no row fails with that reason; rows whose question_id
is not in the dataset are reported as extra.

A conversation turn's row is found by its sample id ``conversation_id::turn`` (``question_id``), or, when the row
has no ``question_id``, by its ``conversation_id`` and ``turn`` fields (a row giving all three must agree). A row
may carry ``query``: the retrieval query the system sent (its rewrite of the turn).

Optional fields: ``scores`` (one retrieval score per context, in the same order) and ``trace`` (a JSON
object) are kept in the output's trace, so the IR metrics order tied contexts exactly as trec_eval does
(score descending, ties by id descending). ``trajectory``: an agent's steps (a list of step objects, the return
shape of docs/own-rag.md), stored as the output's trajectory. In CSV, ``scores`` and ``trajectory`` are JSON
arrays and ``trace`` a JSON object.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Corpus, DatasetError, RAGOutput, RAGSystem, Sample, turn_id

from .outputs import to_output
from .row_file import RowFile

LIST_FIELDS = ("contexts", "contexts_id", "contexts_ids", "context_ids", "context_document_ids", "scores")


class PrecomputedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="JSONL or CSV file of outputs, relative to the config's folder.")
    id_field: str = Field("question_id", description="Field joining a row to its sample.")


class PrecomputedRAG(RAGSystem):
    """Outputs your system produced earlier, read from JSONL/CSV and joined to samples by question_id."""

    name = "precomputed"
    Options = PrecomputedOptions

    @classmethod
    def content_key(cls, options: PrecomputedOptions, context) -> str | None:
        """sha256 of the outputs file: an edited file is a new system, never a resume of the old answers."""
        path = context.resolve(options.path)
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()

    def prepare(self, corpus: Corpus) -> None:
        path = self.context.resolve(self.options.path)
        # question_id -> (line, the row as compact JSON), on disk: memory does not grow with the file
        self.rows = RowFile()
        self.path = path
        try:
            for line, row in read_rows(path):
                key = row_key(row, self.options.id_field, f"{path}, line {line}")
                _check_trace_fields(row, f"{path}, line {line}")
                self._duplicate(
                    self.rows.add(str(key), line, json.dumps(row, separators=(",", ":"), ensure_ascii=False))
                )
        except DatasetError:
            self._duplicate(self.rows.flush())  # a key repeated on an earlier line is the first error
            raise
        self._duplicate(self.rows.flush())

    def _duplicate(self, found: tuple[str, int, int] | None) -> None:
        """The error of a question id given on two lines (``found``: the id, the later line, the earlier)."""
        if found is not None:
            key, later, earlier = found
            raise DatasetError(f"{self.path}, line {later}: {self.options.id_field} '{key}' already on line {earlier}.")

    def check_samples(self, samples: Iterable[Sample]) -> list[str]:
        """Warnings for rows that match no sample (missing rows fail their samples in :meth:`answer`)."""
        count, extra = self.rows.keys_not_in((s.question_id for s in samples), shown=5)
        if not count:
            return []
        shown = ", ".join(extra) + (f" and {count - 5} more" if count > 5 else "")
        return [f"{self.path.name}: {count} row(s) match no sample: {shown}"]

    async def aclose(self) -> None:
        """Drop the rows read by :meth:`prepare` (their temporary file)."""
        rows = getattr(self, "rows", None)
        if rows is not None:
            rows.close()

    async def answer(self, sample: Sample) -> RAGOutput:
        found = self.rows.get(sample.question_id)
        if found is None:
            raise LookupError(f"no precomputed output for question_id '{sample.question_id}' in {self.path.name}")
        line, text = found
        row = json.loads(text)
        output = to_output(row, f"{self.path.name}, line {line}")
        trace = {**row.get("trace", {}), **({"scores": [float(x) for x in row["scores"]]} if "scores" in row else {})}
        return output.model_copy(update={"trace": trace}) if trace else output


def row_key(row: dict[str, Any], id_field: str, where: str) -> str:
    """The sample id a row answers: its ``id_field``, else ``conversation_id::turn`` from those two fields."""
    key = row.get(id_field)
    conversation, turn = row.get("conversation_id"), row.get("turn")
    if conversation in (None, "") and turn in (None, ""):
        if key in (None, ""):
            raise DatasetError(f"{where}: no '{id_field}' field (nor conversation_id and turn).")
        return str(key)
    try:
        number = int(turn)
    except (TypeError, ValueError):
        number = 0
    if conversation in (None, "") or number < 1 or str(number) != str(turn).strip():
        raise DatasetError(
            f"{where}: a conversation turn's row needs both conversation_id and turn (a whole number from 1); "
            f"got conversation_id = {conversation!r}, turn = {turn!r}."
        )
    found = turn_id(str(conversation), number)
    if key not in (None, "") and str(key) != found:
        raise DatasetError(
            f"{where}: {id_field} '{key}' does not match conversation_id and turn ('{found}'); give one of them, "
            "or make them agree."
        )
    return found


def _check_trace_fields(row: dict[str, Any], where: str) -> None:
    """``trace`` must be an object and ``scores`` one finite number per retrieved context."""
    if "trace" in row and not isinstance(row["trace"], dict):
        raise DatasetError(f"{where}: 'trace' must be a JSON object, not {type(row['trace']).__name__}.")
    if "scores" not in row:
        return
    scores = row["scores"]
    if not isinstance(scores, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in scores
    ):
        raise DatasetError(f"{where}: 'scores' must be a list of finite numbers, one per context.")
    ranked = next((row[k] for k in ("context_ids", "contexts_ids", "contexts_id", "contexts") if row.get(k)), [])
    if len(scores) != len(ranked):
        raise DatasetError(
            f"{where}: {len(scores)} scores for {len(ranked)} contexts; give one score per context, in the same order."
        )


def read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) from a .jsonl or .csv file; list fields in CSV cells are JSON arrays."""
    if not path.is_file():
        raise DatasetError(f"{path}: precomputed outputs file not found. Check options.path.")
    if path.suffix == ".jsonl":
        yield from _jsonl(path)
    elif path.suffix == ".csv":
        yield from _csv(path)
    else:
        raise DatasetError(f"{path}: unknown extension '{path.suffix}'; use .jsonl or .csv.")


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except ValueError as exc:
                raise DatasetError(f"{path}, line {line}: not valid JSON ({exc.msg}).") from None
            if not isinstance(row, dict):
                raise DatasetError(f"{path}, line {line}: expected a JSON object.")
            yield line, row


def _csv(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        for index, row in enumerate(reader, start=2):
            if None in row or None in row.values():  # DictReader's marks of a long or a short row
                columns = ", ".join(reader.fieldnames or [])
                raise DatasetError(
                    f"{path}, line {reader.line_num}: the row does not have one cell per column ({columns}); "
                    "give every column a cell (empty: ,,) and quote cells that contain commas."
                )
            parsed: dict[str, Any] = dict(row)
            for key in LIST_FIELDS:
                cell = parsed.get(key)
                if cell:
                    try:
                        parsed[key] = json.loads(cell) if cell.lstrip().startswith("[") else [cell]
                    except ValueError:
                        raise DatasetError(f"{path}, line {index}: '{key}' is not a JSON array.") from None
            if parsed.get("trace"):
                try:
                    parsed["trace"] = json.loads(parsed["trace"])
                except ValueError:
                    raise DatasetError(f"{path}, line {index}: 'trace' is not a JSON object.") from None
            else:
                parsed.pop("trace", None)
            if not parsed.get("scores"):
                parsed.pop("scores", None)
            _trajectory_cell(parsed, f"{path}, line {index}")
            yield index, parsed


def _trajectory_cell(parsed: dict[str, Any], where: str) -> None:
    """A CSV row's ``trajectory`` cell: a JSON array of step objects (an empty cell: none)."""
    if not parsed.get("trajectory"):
        parsed.pop("trajectory", None)
        return
    try:
        parsed["trajectory"] = json.loads(parsed["trajectory"])
    except ValueError:
        raise DatasetError(f"{where}: 'trajectory' is not a JSON array of step objects.") from None
