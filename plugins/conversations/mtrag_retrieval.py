"""The ``mtrag_retrieval`` dataset source: one domain of MTRAG's retrieval tasks, read as published.

MTRAG (IBM/mt-rag-benchmark, commit cc5b1d4, ``mtrag-human/retrieval_tasks/README.md``) gives each domain
(clapnq, cloud, fiqa, govt) in BEIR form: a folder with ``<domain>_lastturn.jsonl`` (the turn alone),
``<domain>_rewrite.jsonl`` (the turn rewritten to stand alone) and ``<domain>_questions.jsonl`` (every user turn
so far), each ``{"_id": "<conversation>" "<::>" "<turn>", "text": "|user|: ..."}``; ``qrels/dev.tsv`` (BEIR's TSV);
and a passage corpus published apart, zipped (``corpora/passage_level/<domain>.jsonl.zip``: read as it is, no need
to unzip; ``.jsonl`` and ``.jsonl.gz`` too).

Samples follow BEIR's convention (:mod:`ragassay.plugins.beir`): one per query with judgements, in the order of
the query file, ``reference_context_ids`` the passages graded above 0, ``metadata["relevance"]`` every grade. Each
is a conversation turn: ``question_id`` = ``conversation::turn``, ``conversation_id``, ``turn``, and ``history``
the earlier user turns (from the questions file; the retrieval files hold no agent turns).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import DatasetError, DatasetSource, Document, Sample, Turn, turn_id
from ragassay.plugins.beir import make_sample
from ragassay.plugins.beir_files import DOC_ID_KEYS, corpus_documents, jsonl_queries, read_qrels_file, record_id

_QUERY_ID = re.compile(r"^(?P<cid>.+?)<::>(?P<turn>\d+)$")
_USER_TAG = re.compile(r"^\|user\|:\s?")
_NEXT_USER = re.compile(r"\n(?=\|user\|:)")
_EXAMPLES = 3


class MtragRetrievalOptions(BaseModel):
    """Options of the ``mtrag_retrieval`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="The domain's folder (e.g. mtrag-human/retrieval_tasks/clapnq), relative to the project."
    )
    corpus: str = Field(
        description="The domain's passage corpus: .jsonl.zip as published (corpora/passage_level/clapnq.jsonl.zip), "
        ".jsonl or .jsonl.gz; relative to the project."
    )
    queries: Literal["lastturn", "rewrite", "questions"] = Field(
        "lastturn",
        description="Which query file: 'lastturn' (the turn as asked), 'rewrite' (MTRAG's standalone rewrite) or "
        "'questions' (every user turn so far, joined).",
    )
    qrels_file: str = Field("qrels/dev.tsv", description="The qrels (BEIR TSV), relative to path.")
    strip_speaker_tags: bool = Field(
        False,
        description="Drop MTRAG's '|user|: ' line prefixes from the query text (kept by default: the text as "
        "published, as MTRAG's retrieval baselines read it).",
    )


class MtragRetrievalSource(DatasetSource):
    """One domain of MTRAG's retrieval tasks: its passage corpus, and a sample per judged turn."""

    name = "mtrag_retrieval"
    Options = MtragRetrievalOptions

    def _folder(self) -> Path:
        folder = self.context.resolve(self.options.path)
        if not folder.is_dir():
            raise DatasetError(f"MTRAG retrieval folder not found: {folder}; set 'path' to a domain's folder")
        return folder

    def query_file(self, kind: str | None = None) -> Path:
        """The query file of ``kind`` (default: the configured one): ``<domain>_<kind>.jsonl``."""
        kind = kind or self.options.queries
        folder = self._folder()
        found = sorted(folder.glob(f"*_{kind}.jsonl"))
        if len(found) != 1:
            holds = ", ".join(sorted(p.name for p in folder.glob("*.jsonl"))) or "no .jsonl file"
            raise DatasetError(
                f"{folder}: expected one '<domain>_{kind}.jsonl' query file, found {len(found)} ({holds})"
            )
        return found[0]

    def samples(self) -> Iterator[Sample]:
        """One sample per query with judgements, in the order of the query file."""
        file = self.query_file()
        qrels = read_qrels_file(self._folder() / self.options.qrels_file)
        history = self._histories() if self.options.queries != "questions" else {}
        unjudged: list[str] = []
        read = 0
        for line, qid, text, extras in jsonl_queries(file, "text"):
            cid, turn = _split_query_id(qid, file, line)
            judged = qrels.get(qid)
            if judged is None:
                unjudged.append(qid)
                continue
            earlier = history.get(qid) if history else _user_turns(text)[:-1]
            query = _strip_tags(text) if self.options.strip_speaker_tags else text
            fields = make_sample(turn_id(cid, turn), query, judged, extras).model_dump()
            fields.update(conversation_id=cid, turn=turn, history=earlier or [], mtrag_task_id=qid)
            read += 1
            yield Sample(**fields)
        self._report(file, qrels, read, unjudged)

    def documents(self) -> Iterator[Document]:
        """The passages of the corpus, streamed (a zipped corpus is read inside its archive)."""
        file = self.context.resolve(self.options.corpus)
        if file.name.endswith(".zip"):
            yield from _zipped_documents(file)
        else:
            yield from (document for _, document in corpus_documents(file))

    def _histories(self) -> dict[str, list[Turn]]:
        """Query id -> the earlier user turns, from the questions file (empty when the folder has none)."""
        try:
            file = self.query_file("questions")
        except DatasetError:
            return {}
        return {qid: _user_turns(text)[:-1] for _, qid, text, _ in jsonl_queries(file, "text")}

    def _report(self, file: Path, qrels: dict, read: int, unjudged: list[str]) -> None:
        if not read:
            raise DatasetError(
                f"{file}: none of its queries is judged in {self.options.qrels_file} (e.g. "
                f"{', '.join(map(repr, unjudged[:_EXAMPLES]))}); the files do not belong together"
            )
        if unjudged:
            self.context.warn(
                f"{file}: {len(unjudged)} queries have no judgement in {self.options.qrels_file} (e.g. "
                f"{', '.join(map(repr, unjudged[:_EXAMPLES]))}); skipped, as BEIR does"
            )
        if len(qrels) > read:
            self.context.warn(f"{self.options.qrels_file}: {len(qrels) - read} judged queries are not in {file.name}")


def _split_query_id(qid: str, file: Path, line: int) -> tuple[str, int]:
    match = _QUERY_ID.match(qid)
    if match is None or int(match.group("turn")) < 1:
        raise DatasetError(
            f"{file}, line {line}: query id {qid!r} is not MTRAG's '<conversation><::><turn>'; is this an MTRAG "
            "retrieval folder? (read other BEIR folders with the beir source)"
        )
    return match.group("cid"), int(match.group("turn"))


def _user_turns(text: str) -> list[Turn]:
    """The user turns of a questions-file text ('|user|: a\\n|user|: b')."""
    return [Turn(speaker="user", text=_USER_TAG.sub("", part)) for part in _NEXT_USER.split(text)]


def _strip_tags(text: str) -> str:
    return "\n".join(turn.text for turn in _user_turns(text))


def _zipped_documents(file: Path) -> Iterator[Document]:
    """The documents of the JSONL member of a zip archive (MTRAG's passage_level/<domain>.jsonl.zip)."""
    if not file.is_file():
        raise DatasetError(f"corpus not found: {file}; set 'corpus' to the domain's passage_level .jsonl.zip")
    try:
        archive = zipfile.ZipFile(file)
    except zipfile.BadZipFile as exc:
        raise DatasetError(f"{file}: not a zip archive ({exc}); download it again") from None
    with archive:
        members = [n for n in archive.namelist() if n.endswith(".jsonl") and not n.startswith("__MACOSX")]
        if len(members) != 1:
            raise DatasetError(f"{file}: expected one .jsonl member, found {members or 'none'}")
        with archive.open(members[0]) as raw:
            for number, text in enumerate(io.TextIOWrapper(raw, encoding="utf-8-sig"), start=1):
                if text.strip():
                    yield _document(_json_record(text, file, number), file, number)


def _json_record(text: str, file: Path, line: int) -> dict[str, Any]:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{file}, line {line}: not JSON ({exc.msg}); the corpus is damaged") from None
    if not isinstance(record, dict):
        raise DatasetError(f"{file}, line {line}: expected a JSON object")
    return record


def _document(record: dict[str, Any], file: Path, line: int) -> Document:
    """A corpus record as :func:`ragassay.plugins.beir_files.corpus_documents` reads one."""
    ident = record_id(record, DOC_ID_KEYS, file, line)
    text = record.pop("text", None)
    if not isinstance(text, str):
        raise DatasetError(f"{file}, line {line}: passage '{ident}' needs a string 'text'")
    title = record.pop("title", None)
    return Document(id=ident, title="" if title is None else str(title), text=text, metadata=record)
