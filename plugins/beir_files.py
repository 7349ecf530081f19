"""Readers for the files of public retrieval benchmarks: JSONL corpora and queries, qrels, TREC topics.

Pure functions (no ragassay component), used by the ``beir`` dataset source (:mod:`ragassay.plugins.beir`)
and usable on their own:

* :func:`corpus_documents`: a JSONL corpus (BEIR/MTEB ``_id``, ir_datasets ``doc_id``, or ``id``; ``title``,
  ``text``; other keys kept as metadata), ``.jsonl`` or ``.jsonl.gz``;
* :func:`jsonl_queries`: JSONL queries (``_id``, ``query_id`` or ``id``; the text in a chosen field);
* :func:`trec_topics`: classic TREC topics (``<top> <num> Number: 401 <title> ... <desc> ... <narr> ...``);
* :func:`read_qrels_file`: qrels as BEIR's TSV (header ``query-id corpus-id score``), MTEB's or ir_datasets'
  JSONL (``query-id``/``corpus-id``/``score`` or ``query_id``/``doc_id``/``relevance``), or TREC's
  ``qid iter docid rel`` (the format trec_eval reads).

Every error is a :class:`ragassay.DatasetError` naming the file and the line, and saying what to do. Empty
files and repeated ids (a document, a query, a query-document pair of the qrels) are errors.
"""

from __future__ import annotations

import gzip
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from ragassay import DatasetError, Document, describe_json_error

#: Keys that hold a document's id in a JSONL corpus, in order of precedence.
DOC_ID_KEYS = ("_id", "doc_id", "id")
#: Keys that hold a query's id in a JSONL queries file, in order of precedence.
QUERY_ID_KEYS = ("_id", "query_id", "id")
#: The fields of a classic TREC topic, by the name ``query_field`` takes.
TOPIC_FIELDS = {"title": "title", "description": "desc", "narrative": "narr"}

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
_JSONL_QRELS_KEYS = (("query-id", "corpus-id", "score"), ("query_id", "doc_id", "relevance"))
_TOPIC = re.compile(r"<top>(.*?)</top>", re.DOTALL | re.IGNORECASE)
_TAG = re.compile(r"<(num|title|desc|narr)>", re.IGNORECASE)
_LABELS = re.compile(r"^\s*(Number|Topic|Description|Narrative)\s*:", re.IGNORECASE)
_CLOSING = re.compile(r"</(num|title|desc|narr)>", re.IGNORECASE)

Qrels = dict[str, dict[str, int | float]]


# -- files and lines ------------------------------------------------------------------------------------


def open_text(file: Path) -> TextIO:
    """Open a UTF-8 text file, gzip-compressed when its name ends in ``.gz`` (a byte-order mark is skipped)."""
    if not file.is_file():
        raise DatasetError(f"file not found: {file}; check the dataset's path and file options")
    try:
        if file.suffix == ".gz":
            return gzip.open(file, "rt", encoding="utf-8-sig", newline="")
        return file.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise DatasetError(f"cannot read {file}: {exc.strerror or exc}") from None


def numbered_lines(file: Path) -> Iterator[tuple[int, str]]:
    """(line number from 1, line without its end) of a text file; decoding errors name the file."""
    with open_text(file) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                yield number, line.rstrip("\r\n")
        except UnicodeDecodeError as exc:
            raise DatasetError(f"{file}: not UTF-8 text ({exc.reason}); save it as UTF-8") from None
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
            raise DatasetError(f"{file}: cannot be read ({exc}); download it again") from None


def jsonl_records(file: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, record) per non-blank line of a JSONL file; an empty file is an error."""
    empty = True
    for number, text in numbered_lines(file):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{file}, line {number}: {describe_json_error(exc)}; fix the line") from None
        if not isinstance(record, dict):
            raise DatasetError(f"{file}, line {number}: expected a JSON object, got {type(record).__name__}")
        empty = False
        yield number, record
    if empty:
        raise DatasetError(f"{file} is empty: it holds no JSON record; check that the download is complete")


def record_id(record: dict[str, Any], keys: tuple[str, ...], file: Path, line: int) -> str:
    """The id of a record: the first of ``keys`` present, a non-empty string or integer."""
    for key in keys:
        if key in record:
            value = record.pop(key)
            if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
                raise DatasetError(f"{file}, line {line}: '{key}' must be a non-empty string, got {value!r}")
            return str(value)
    names = ", ".join(f"'{key}'" for key in keys)
    raise DatasetError(f"{file}, line {line}: the record has no id: give it one of {names}")


# -- corpus and queries ---------------------------------------------------------------------------------


def corpus_documents(file: Path) -> Iterator[tuple[int, Document]]:
    """(line, document) per record of a JSONL corpus (``.jsonl`` or ``.jsonl.gz``).

    id = ``_id``, else ``doc_id``, else ``id``; text = ``text`` (required, may be empty); title = ``title``
    (empty when absent or null); every other key becomes metadata (a ``metadata`` object is merged in, as
    BEIR's corpora carry one). Repeated ids are not checked here (see :class:`ragassay.SeenKeys`).
    """
    for line, record in jsonl_records(file):
        ident = record_id(record, DOC_ID_KEYS, file, line)
        text = record.pop("text", None)
        if not isinstance(text, str):
            raise DatasetError(
                f"{file}, line {line}: document '{ident}' needs a string 'text' field (got {text!r}); fix the record"
            )
        title = record.pop("title", None)
        nested = record.pop("metadata", None)
        metadata = {**record, **nested} if isinstance(nested, dict) else record
        if nested is not None and not isinstance(nested, dict):
            metadata["metadata"] = nested
        yield line, Document(id=ident, title="" if title is None else str(title), text=text, metadata=metadata)


def jsonl_queries(file: Path, field: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line, query id, text, other keys) per record of a JSONL queries file; the text is in ``field``."""
    for line, record in jsonl_records(file):
        qid = record_id(record, QUERY_ID_KEYS, file, line)
        text = record.pop(field, None)
        if not isinstance(text, str) or not text.strip():
            keys = ", ".join(sorted(record)) or "none"
            raise DatasetError(
                f"{file}, line {line}: query '{qid}' has no text in '{field}' (other keys: {keys}); "
                "set query_field to the key that holds the query"
            )
        yield line, qid, text, record


def trec_topics(file: Path, field: str) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
    """(line of ``<top>``, topic number, text of ``field``, the other fields) per topic of a TREC topics file.

    The classic layout (TREC ad hoc and Robust): ``<top>``, then ``<num> Number: 401``, ``<title>``,
    ``<desc> Description:``, ``<narr> Narrative:``, each running to the next tag, then ``</top>``. Labels
    (``Number:``, ``Topic:``, ``Description:``, ``Narrative:``) and closing tags are dropped, whitespace is
    collapsed. ``field``: ``title``, ``description`` or ``narrative``.
    """
    text = "\n".join(line for _, line in numbered_lines(file))
    topics = list(_TOPIC.finditer(text))
    if not topics:
        raise DatasetError(
            f"{file}: no TREC topic found (expected <top> <num> Number: ... <title> ... </top> blocks); "
            "check the file, or give JSONL queries"
        )
    for match in topics:
        line = text.count("\n", 0, match.start()) + 1
        fields = _topic_fields(match.group(1))
        number = fields.pop("num", "")
        if not number:
            raise DatasetError(f"{file}, line {line}: the topic has no <num> (e.g. '<num> Number: 401'); add it")
        tag = TOPIC_FIELDS[field]
        query = fields.pop(tag, "")
        if not query:
            raise DatasetError(
                f"{file}, line {line}: topic {number} has no <{tag}> text; choose another query_field "
                f"({', '.join(TOPIC_FIELDS)})"
            )
        names = {tag: name for name, tag in TOPIC_FIELDS.items()}
        yield line, number, query, {names[t]: value for t, value in fields.items()}


def _topic_fields(body: str) -> dict[str, str]:
    """The tagged fields of one topic body: tag -> text (labels, closing tags and extra whitespace removed)."""
    body = _CLOSING.sub(" ", body)
    parts = _TAG.split(body)
    fields: dict[str, str] = {}
    for tag, value in zip(parts[1::2], parts[2::2]):
        fields[tag.lower()] = " ".join(_LABELS.sub("", value).split())
    return fields


# -- qrels ----------------------------------------------------------------------------------------------


def read_qrels_file(file: Path) -> Qrels:
    """``{query id: {document id: grade}}`` from a qrels file, its format told by its content.

    - ``.jsonl``/``.jsonl.gz``: one object per line with ``query-id``, ``corpus-id``, ``score`` (MTEB) or
      ``query_id``, ``doc_id``, ``relevance`` (``ir_datasets export ... qrels --format jsonl``);
    - a first line ``query-id<TAB>corpus-id<TAB>score``: BEIR's TSV, three tab-separated columns;
    - otherwise TREC qrels: ``qid iter docid rel`` separated by white space (trec_eval's input).

    Grades are integers (or finite numbers, kept as floats when not whole); negative grades are kept (trec_eval:
    in the pool but unjudged). A query-document pair given twice, an empty file and a malformed line are errors.
    """
    if file.name.endswith((".jsonl", ".jsonl.gz")):
        rows = _jsonl_qrels(file)
    else:
        rows = _text_qrels(file)
    qrels: Qrels = {}
    lines: dict[tuple[str, str], int] = {}
    for line, qid, docid, grade in rows:
        if (qid, docid) in lines:
            raise DatasetError(
                f"{file}, line {line}: query '{qid}' judges document '{docid}' again (first on line "
                f"{lines[qid, docid]}); keep one judgement per pair"
            )
        lines[qid, docid] = line
        qrels.setdefault(qid, {})[docid] = grade
    if not qrels:
        raise DatasetError(f"{file} holds no judgement; check that the download is complete")
    return qrels


def _text_qrels(file: Path) -> Iterator[tuple[int, str, str, int | float]]:
    """(line, qid, docid, grade) of a BEIR TSV or a TREC qrels file."""
    beir = None
    for number, text in numbered_lines(file):
        if not text.strip():
            continue
        if beir is None:
            beir = tuple(cell.strip().lower() for cell in text.split("\t")) == BEIR_QRELS_HEADER
            if beir:
                continue
        if beir:
            cells = text.split("\t")
            if len(cells) != 3:
                raise DatasetError(
                    f"{file}, line {number}: a BEIR qrels line has 3 tab-separated columns (query-id, corpus-id, "
                    f"score), got {len(cells)}: {text!r}"
                )
            qid, docid, grade = (cell.strip() for cell in cells)
        else:
            fields = text.split()
            if len(fields) != 4:
                raise DatasetError(
                    f"{file}, line {number}: a TREC qrels line has 4 fields (qid iter docid rel), got "
                    f"{len(fields)}: {text!r}; a BEIR qrels file starts with the header 'query-id<TAB>corpus-id"
                    "<TAB>score'"
                )
            qid, _, docid, grade = fields
        yield number, qid, docid, _grade(grade, file, number)


def _jsonl_qrels(file: Path) -> Iterator[tuple[int, str, str, int | float]]:
    """(line, qid, docid, grade) of a JSONL qrels file (MTEB or ir_datasets keys)."""
    for number, record in jsonl_records(file):
        keys = next((keys for keys in _JSONL_QRELS_KEYS if all(key in record for key in keys)), None)
        if keys is None:
            raise DatasetError(
                f"{file}, line {number}: a qrels record needs 'query-id', 'corpus-id', 'score' (MTEB) or "
                f"'query_id', 'doc_id', 'relevance' (ir_datasets); got {', '.join(sorted(record))}"
            )
        qid, docid, grade = (record[key] for key in keys)
        for key, value in zip(keys[:2], (qid, docid)):
            if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
                raise DatasetError(f"{file}, line {number}: '{key}' must be a non-empty string, got {value!r}")
        yield number, str(qid), str(docid), _grade(grade, file, number)


def _grade(value: Any, file: Path, line: int) -> int | float:
    """A relevance grade: an integer, or a finite number (whole numbers become int)."""
    try:
        grade = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        grade = math.nan
    if not math.isfinite(grade):
        raise DatasetError(f"{file}, line {line}: the relevance grade must be a number, got {value!r}")
    return int(grade) if grade.is_integer() else grade
