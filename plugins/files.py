"""The ``files`` dataset source: samples from a JSONL or CSV file, documents from text and JSON files.

Samples file (``path``): one record per JSONL line or CSV row, with the :class:`ragassay.Sample` fields
(``question`` and optionally ``question_id``, ``reference_answers``, ``reference_contexts``,
``reference_context_ids``, ``is_answerable``, ``group_id``, ``metadata``); other keys are kept as free
attributes. In CSV, ``is_answerable`` is true/false and a list field (``reference_answers``,
``reference_contexts``, ``reference_context_ids``) holds either a JSON array (``["a.md", "b.md"]``) or
values separated by semicolons (``a.md;b.md``; spaces around each value are dropped, empty values skipped);
write a value that contains a semicolon inside a JSON array.

Documents (``documents``, glob patterns): see :func:`read_documents`, which the ``[corpus] paths`` of a
config use as well.
"""

from __future__ import annotations

import csv
import glob
import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragassay import (
    ComponentContext,
    DatasetError,
    DatasetSource,
    Document,
    DuplicateKey,
    Sample,
    SeenKeys,
    describe_json_error,
    hookimpl,
)

_LIST_FIELDS = ("reference_answers", "reference_contexts", "reference_context_ids")
_BOOLEANS = {"true": True, "false": False, "1": True, "0": False, "yes": True, "no": False}
_HEADING = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".rst")
_RECORD_SUFFIXES = (".json", ".jsonl")
_SUPPORTED_NAMES = ".txt, .text, .md, .markdown, .rst, .json or .jsonl"


class FilesSource(DatasetSource):
    """Reads samples from a JSONL or CSV file and corpus documents from text (.txt/.md/.rst...) and JSON files."""

    name = "files"

    class Options(BaseModel):
        """Options of the files dataset source."""

        model_config = ConfigDict(extra="forbid")

        path: str | None = Field(
            None, description="Samples file (.jsonl or .csv), relative to the project folder; unset for documents only."
        )
        documents: list[str] = Field(
            default_factory=list,
            description="Glob patterns of corpus documents (.txt, .text, .md, .markdown, .rst, .json, .jsonl).",
        )
        question_field: str = Field("question", description="Record key holding the question.")
        id_field: str = Field("question_id", description="Record key holding the question id (default q<line>).")
        layout: Literal["samples", "articles"] = Field(
            "samples",
            description="'samples': records are samples with the Unitxt fields. 'articles': the boolean-agent "
            "paper's layout, one article per record (title, content, url, date, question); the article is the "
            "sample's reference context and, unless 'documents' is set, the corpus.",
        )

    def samples(self) -> Iterator[Sample]:
        """Yield one :class:`Sample` per record; errors name the file and line."""
        if self.options.path is None:
            raise DatasetError("the files dataset source has no 'path' option: set it to a .jsonl or .csv samples file")
        file = self.context.resolve(self.options.path)
        seen = SeenKeys()  # question id -> line, with bounded memory (a file of millions of samples)
        articles: dict[str, Sample] = {}
        try:
            yield from self._unique(self._records(file, articles), seen, file)
        finally:
            seen.close()

    def _records(self, file: Path, articles: dict[str, Sample]) -> Iterator[tuple[int, Sample]]:
        """(line, sample) per record of ``file`` (an exact repeat of an earlier article is skipped)."""
        for line, record in _read_records(file):
            if self.options.layout == "articles":
                sample = _article_sample(record, file, line, self.options.question_field)
                if articles.get(sample.question_id) == sample:
                    continue  # an exact repeat of an earlier article (the paper's A_f has 12): kept once
                articles[sample.question_id] = sample
            else:
                sample = self._sample(record, file, line)
            yield line, sample

    def _unique(self, records: Iterator[tuple[int, Sample]], seen: SeenKeys, file: Path) -> Iterator[Sample]:
        """The samples of ``records``; a question id seen twice is an error naming both lines."""
        for line, sample in records:
            self._no_duplicate(seen.add(sample.question_id, line), file)
            yield sample
        self._no_duplicate(seen.flush(), file)

    def _no_duplicate(self, duplicate: DuplicateKey | None, file: Path) -> None:
        if duplicate is not None:
            raise DatasetError(
                f"{file}, line {duplicate.second}: duplicate question_id '{duplicate.key}' (first on line "
                f"{duplicate.first}); make every {self.options.id_field} unique"
            )

    def documents(self) -> Iterator[Document]:
        """Yield the documents matched by the ``documents`` glob patterns (or, with the 'articles' layout and no
        patterns, the articles of ``path``)."""
        if not self.options.documents and self.options.layout == "articles" and self.options.path:
            return read_documents([self.options.path], self.context)
        return read_documents(self.options.documents, self.context)

    def _sample(self, record: dict[str, Any], file: Path, line: int) -> Sample:
        """Map one record onto a :class:`Sample` (question and id fields renamed, lists normalised)."""
        opts = self.options
        record = dict(record)
        question = record.pop(opts.question_field, None)
        if not isinstance(question, str) or not question.strip():
            raise DatasetError(
                f"{file}, line {line}: no question: the record needs a non-empty '{opts.question_field}' "
                "(set question_field to the key that holds the question)"
            )
        if opts.question_field != "question" and "question" in record:
            raise DatasetError(
                f"{file}, line {line}: the record has both '{opts.question_field}' (question_field) and 'question'; "
                "rename one of them"
            )
        qid = record.pop(opts.id_field, None)
        record["question"], record["question_id"] = question, str(qid) if qid not in (None, "") else f"q{line}"
        for key in _LIST_FIELDS:
            if key in record:
                record[key] = _as_list(record[key], key, file, line, csv_cell=file.suffix.lower() == ".csv")
        try:
            return Sample.model_validate(record)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            raise DatasetError(f"{file}, line {line}: invalid sample ({problems}); fix the record") from None


def _article_sample(record: dict[str, Any], file: Path, line: int, question_field: str) -> Sample:
    """A sample from an article record: the article is the reference context, its id the document id that
    :func:`read_documents` gives the same record (``id``, else ``_id``, else ``url``, else ``title``)."""
    question = record.get(question_field)
    if not isinstance(question, str) or not question.strip():
        raise DatasetError(f"{file}, line {line}: no question: the article needs a non-empty '{question_field}'")
    document = _record_document(dict(record), file.name, f"{file}, line {line}")
    metadata = {k: v for k, v in record.items() if k in ("title", "url", "date")}
    return Sample(
        question_id=document.id,
        question=question,
        reference_contexts=[document.text],
        reference_context_ids=[document.id],
        metadata=metadata,
    )


def _as_list(value: Any, key: str, file: Path, line: int, *, csv_cell: bool) -> list[str]:
    """A list of strings from a list, one string, or a CSV cell holding a JSON array or ``;``-separated values."""
    if isinstance(value, str):
        if not value.strip():
            return []
        text = value.strip()
        if not csv_cell:
            return [value]
        if not text.startswith("["):
            return [item.strip() for item in text.split(";") if item.strip()]
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"{file}, line {line}: '{key}' is not a valid JSON array ({describe_json_error(exc, column=False)})"
                "; fix the cell"
            ) from None
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    if any(isinstance(item, (dict, list)) or item is None for item in value):
        raise DatasetError(f"{file}, line {line}: '{key}' must be a list of strings")
    return [item if isinstance(item, str) else str(item) for item in value]


def _read_records(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) pairs of a .jsonl or .csv samples file."""
    if file.is_dir():
        raise DatasetError(
            f"the dataset 'path' {file} is a folder; give the samples file in it: one .jsonl or .csv file with a "
            'question per line (e.g. path = "qa.jsonl")'
        )
    if not file.is_file():
        raise DatasetError(f"samples file not found: {file}; check the dataset 'path' option")
    suffix = file.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_records(file)
    if suffix == ".csv":
        return _csv_records(file)
    raise DatasetError(f"{file}: unknown samples file extension '{file.suffix}'; use .jsonl or .csv")


def _open_text(file: Path):
    """Open a UTF-8 text file (a byte-order mark is skipped); errors become :class:`DatasetError`."""
    try:
        return file.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise DatasetError(f"cannot read {file}: {exc.strerror}") from None


def _jsonl_records(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a JSONL file: one JSON object per non-blank line."""
    with _open_text(file) as handle:
        for line, text in _numbered_lines(handle, file):
            if not text.strip():
                continue
            yield line, _json_object(text, file, line)


def _numbered_lines(handle: Iterable[str], file: Path) -> Iterator[tuple[int, str]]:
    """Lines numbered from 1; a decoding error becomes :class:`DatasetError`."""
    try:
        yield from enumerate(handle, start=1)
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None


def _read_text(file: Path) -> str:
    """The whole text of a UTF-8 file; errors become :class:`DatasetError`."""
    try:
        return file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
    except OSError as exc:
        raise DatasetError(f"cannot read {file}: {exc.strerror}") from None


def _json_object(text: str, file: Path, line: int) -> dict[str, Any]:
    """One JSONL line parsed as a JSON object."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{file}, line {line}: {describe_json_error(exc)}; fix the line") from None
    if not isinstance(record, dict):
        raise DatasetError(f"{file}, line {line}: expected a JSON object, got {type(record).__name__}")
    return record


def _csv_records(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Records of a CSV file with a header row; blank rows skipped, line = where the record starts."""
    with _open_text(file) as handle:
        reader = csv.reader(handle)
        try:
            header = [name.strip() for name in next(reader, [])]
            start = reader.line_num + 1
            for row in reader:
                line, start = start, reader.line_num + 1  # a quoted cell may span lines
                if any(cell.strip() for cell in row):
                    yield line, _csv_record(header, row, file, line)
        except csv.Error as exc:
            raise DatasetError(f"{file}, line {reader.line_num}: malformed CSV ({exc}); fix the quoting") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None


def _csv_record(header: list[str], row: list[str], file: Path, line: int) -> dict[str, Any]:
    """One CSV row as a record: empty cells left out, is_answerable and metadata parsed."""
    if len(row) != len(header):
        fix = "quote cells that contain commas" if len(row) > len(header) else "give every column a cell (empty: ,,)"
        raise DatasetError(
            f"{file}, line {line}: the row has {len(row)} cells but the header has {len(header)} columns "
            f"({', '.join(header)}); {fix}"
        )
    record = {key: value for key, value in zip(header, row) if value != ""}
    if "is_answerable" in record:
        flag = _BOOLEANS.get(record["is_answerable"].strip().lower())
        if flag is None:
            raise DatasetError(
                f"{file}, line {line}: is_answerable must be true or false, not {record['is_answerable']!r}"
            )
        record["is_answerable"] = flag
    if "metadata" in record:
        try:
            record["metadata"] = json.loads(record["metadata"])
        except json.JSONDecodeError as exc:
            problem = describe_json_error(exc, column=False)
            raise DatasetError(f"{file}, line {line}: metadata must be a JSON object ({problem})") from None
    return record


# -- documents ----------------------------------------------------------------------------------------


def read_documents(patterns: Iterable[str], context: ComponentContext) -> Iterator[Document]:
    """Yield the documents of the files matched by glob ``patterns`` (relative to the project folder).

    - text files (``.txt``, ``.text``, ``.md``, ``.markdown``, ``.rst``): one document; id = path relative to
      the project folder (posix, e.g. ``corpus/library-cards.md``), title = the first ``# heading`` or else
      the file stem, text = the whole file.
    - ``.jsonl`` (one object per line) / ``.json`` (an object or a list of objects): one document per
      record; id = ``id``, else ``_id`` (BEIR's and MTEB's corpora), else ``url``, else ``title``; text =
      ``text``, else ``content``; other keys become metadata (the boolean-agent paper layout
      ``title``/``content``/``url``/``date`` works as is).

    Files are read in sorted order, each once. A document repeating an earlier id with the same title and
    text is skipped. A pattern matching no file is a warning when other patterns matched files, and a
    :class:`DatasetError` when no pattern matched any file. Files of other types matched by a wildcard are
    skipped with one warning that counts them; a file named without a wildcard must have a supported type.
    A record without text and an id reused for a different text raise :class:`DatasetError`.
    """
    seen: dict[str, tuple[str, Document]] = {}
    for file in _matched_files(patterns, context):
        for where, document in _file_documents(file, _relative(file, context)):
            if document.id in seen:
                first_where, first = seen[document.id]
                if (first.title, first.text) == (document.title, document.text):
                    continue  # an exact repeat (the boolean-agent data set has some): keep the first
                raise DatasetError(
                    f"{where}: duplicate document id '{document.id}' with a different text (also in "
                    f"{first_where}); document ids must be unique across the corpus"
                )
            seen[document.id] = (where, document)
            yield document


def _matched_files(patterns: Iterable[str], context: ComponentContext) -> list[Path]:
    """Supported files matched by the patterns (``**`` recursive), sorted per pattern, each once."""
    patterns = list(patterns)
    if not patterns:
        return []
    files: dict[Path, None] = {}
    empty: list[str] = []
    skipped: dict[Path, None] = {}
    for pattern in patterns:
        matches = sorted(Path(p) for p in glob.glob(str(context.resolve(pattern)), recursive=True))
        matches = [path for path in matches if path.is_file()]
        if not matches:
            empty.append(pattern)
        elif not glob.has_magic(pattern) and not _supported(matches[0]):
            raise DatasetError(
                f"{matches[0]}: unsupported document file type '{matches[0].suffix}'; use {_SUPPORTED_NAMES}"
            )
        skipped.update(dict.fromkeys(path for path in matches if not _supported(path)))
        files.update(dict.fromkeys(path for path in matches if _supported(path)))
    if not files:
        raise DatasetError(_nothing_matched(patterns, empty, list(skipped), context))
    for pattern in empty:
        context.warn(
            f"document pattern '{pattern}' matches no file (relative to {context.project_dir}); "
            "other patterns matched, so it is ignored"
        )
    if skipped:
        kinds = ", ".join(sorted({path.suffix or "(no extension)" for path in skipped}))
        context.warn(
            f"{len(skipped)} file(s) matched by the document patterns were skipped: unsupported type "
            f"({kinds}); documents are read from {_SUPPORTED_NAMES}"
        )
    return list(files)


def _supported(file: Path) -> bool:
    return file.suffix.lower() in _TEXT_SUFFIXES + _RECORD_SUFFIXES


def _nothing_matched(patterns: list[str], empty: list[str], skipped: list[Path], context: ComponentContext) -> str:
    """The error when no pattern matched a document file."""
    if skipped:
        return (
            f"document patterns {', '.join(map(repr, patterns))} match only files of unsupported types "
            f"({len(skipped)} file(s), e.g. {skipped[0].name}) in {context.project_dir}; documents are read "
            f"from {_SUPPORTED_NAMES}"
        )
    names = ", ".join(repr(p) for p in empty)
    return (
        f"document pattern{'s' if len(empty) > 1 else ''} {names} match{'' if len(empty) > 1 else 'es'} no "
        f"file (relative to {context.project_dir}); fix the pattern or the folder"
    )


def _relative(file: Path, context: ComponentContext) -> str:
    """``file`` relative to the project folder, in posix form (``../`` when outside it)."""
    try:
        return Path(os.path.relpath(file, context.project_dir)).as_posix()
    except ValueError:  # another drive on Windows
        return file.as_posix()


def _file_documents(file: Path, rel: str) -> Iterator[tuple[str, Document]]:
    """(location, document) pairs of one corpus file."""
    suffix = file.suffix.lower()
    if suffix in _TEXT_SUFFIXES:
        text = _read_text(file)
        heading = _HEADING.search(text)
        title = heading.group(1).strip() if heading else file.stem
        yield rel, Document(id=rel, title=title, text=text, metadata={"source": rel})
    elif suffix == ".jsonl":
        for line, record in _jsonl_records(file):
            yield f"{file}, line {line}", _record_document(record, rel, f"{file}, line {line}")
    elif suffix == ".json":
        for item, record in enumerate(_json_list(file), start=1):
            yield f"{file}, item {item}", _record_document(record, rel, f"{file}, item {item}")
    else:
        raise DatasetError(f"{file}: unsupported document file type '{file.suffix}'; use {_SUPPORTED_NAMES}")


def _json_list(file: Path) -> list[dict[str, Any]]:
    """The records of a .json corpus file: a list of objects, or one object."""
    text = _read_text(file)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{file}, line {exc.lineno}: {describe_json_error(exc)}; fix the file") from None
    records = data if isinstance(data, list) else [data]
    for item, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise DatasetError(f"{file}, item {item}: expected a JSON object, got {type(record).__name__}")
    return records


def _record_document(record: dict[str, Any], rel: str, where: str) -> Document:
    """A document from one JSON record (``id``/``_id``/``url``/``title`` for the id, ``text``/``content``)."""
    record = dict(record)
    text = record.pop("text", None)
    if text is None:
        text = record.pop("content", None)
    if not isinstance(text, str):
        raise DatasetError(f"{where}: the record needs a string 'text' (or 'content') field")
    title = record.pop("title", "")
    ident = record.pop("id", None)
    if ident in (None, ""):
        ident = record.pop("_id", None)  # BEIR's and MTEB's corpora
    if ident in (None, ""):
        ident = record.get("url") or title
    if ident in (None, ""):
        raise DatasetError(f"{where}: the record has no 'id', '_id', 'url' or 'title' to identify it; add an 'id'")
    metadata = record.pop("metadata", {})
    metadata = {**record, **metadata} if isinstance(metadata, dict) else {**record, "metadata": metadata}
    metadata.setdefault("source", rel)
    return Document(id=str(ident), title=str(title or ""), text=text, metadata=metadata)


@hookimpl
def register_dataset_sources(register):
    """Register the files dataset source."""
    register(FilesSource)
