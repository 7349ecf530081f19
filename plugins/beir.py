"""The ``beir`` dataset source: a public retrieval benchmark read as it is published.

Four layouts of a folder (``path``), told apart by the files present (``layout = "auto"``) or named:

============== ========================= ======================= =======================================
layout         corpus                    queries                 qrels
============== ========================= ======================= =======================================
``beir``       ``corpus.jsonl``          ``queries.jsonl``       ``qrels/<split>.tsv`` (BEIR's TSV)
``mteb``       ``corpus.jsonl``          ``queries.jsonl``       ``qrels/<split>.jsonl`` (MTEB's JSONL)
``ir_datasets`` ``docs.jsonl``           ``queries.jsonl``       ``qrels.txt`` (TREC) or ``qrels.jsonl``
``trec``       ``corpus.jsonl`` or       ``topics.txt`` (TREC    ``qrels.txt`` (TREC)
               ``docs.jsonl``            topics)
============== ========================= ======================= =======================================

Each JSONL file may also be gzip-compressed (``.jsonl.gz``); ``corpus_file``, ``queries_file`` and
``qrels_file`` name other files. The file formats are read by :mod:`ragassay.plugins.beir_files`.

Samples follow BEIR's convention: one per query that has judgements in the qrels, in the order of the
queries file; ``question_id`` is the query id, ``reference_context_ids`` the documents with a grade above 0
(highest grade first, then by id), and ``metadata["relevance"]`` maps every judged document to its grade
(0 and negative grades included), which the IR metrics (``ndcg_at_k``, ...) read with trec_eval's semantics.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragassay import DatasetError, DatasetSource, Document, Sample, SeenKeys, hookimpl
from ragassay.plugins.beir_files import (
    DOC_ID_KEYS,
    TOPIC_FIELDS,
    Qrels,
    corpus_documents,
    jsonl_queries,
    jsonl_records,
    read_qrels_file,
    record_id,
    trec_topics,
)

Layout = Literal["beir", "mteb", "ir_datasets", "trec"]

#: Default file names per layout (corpus, queries, qrels): the first that exists, each also as ``.gz``.
DEFAULT_FILES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "beir": (("corpus.jsonl",), ("queries.jsonl",), ("qrels/{split}.tsv",)),
    "mteb": (("corpus.jsonl",), ("queries.jsonl",), ("qrels/{split}.jsonl",)),
    "ir_datasets": (("docs.jsonl",), ("queries.jsonl",), ("qrels.txt", "qrels.jsonl")),
    "trec": (("corpus.jsonl", "docs.jsonl"), ("topics.txt",), ("qrels.txt",)),
}
_SPLIT_LAYOUTS = ("beir", "mteb")
_EXAMPLES = 3


class BeirOptions(BaseModel):
    """Options of the ``beir`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The benchmark's folder, relative to the project folder.")
    layout: Literal["auto", "beir", "mteb", "ir_datasets", "trec"] = Field(
        "auto",
        description="'beir': corpus.jsonl, queries.jsonl, qrels/<split>.tsv; 'mteb': the same with "
        "qrels/<split>.jsonl; 'ir_datasets': docs.jsonl, queries.jsonl, qrels.txt (TREC) or qrels.jsonl "
        "(`ir_datasets export`); 'trec': topics.txt, qrels.txt and corpus.jsonl or docs.jsonl; 'auto': "
        "told by the files present (topics.txt, docs.jsonl, qrels/<split>.tsv, qrels/<split>.jsonl).",
    )
    split: str | None = Field(
        None,
        description="Qrels split of the beir and mteb layouts (qrels/<split>.tsv or .jsonl); unset: 'test'. "
        "The ir_datasets and trec layouts have one qrels file: set qrels_file instead.",
    )
    corpus_file: str | None = Field(None, description="Corpus JSONL file, relative to path; unset: the layout's.")
    queries_file: str | None = Field(
        None, description="Queries: a JSONL file, or TREC topics (any other name); relative to path."
    )
    qrels_file: str | None = Field(
        None,
        description="Qrels file, relative to path (BEIR TSV with its header, MTEB/ir_datasets JSONL, or TREC "
        "'qid iter docid rel'; told by its content); unset: the layout's.",
    )
    query_field: str | None = Field(
        None,
        description="Where the query text is: TREC topics 'title', 'description' or 'narrative' (unset: "
        "'title'); JSONL queries: a key (unset: 'text').",
    )

    @model_validator(mode="after")
    def _one_way_to_name_the_qrels(self) -> BeirOptions:
        if self.split is not None and self.qrels_file is not None:
            raise ValueError(
                f"split ('{self.split}') and qrels_file ('{self.qrels_file}') are both set: qrels_file names the "
                "split's qrels itself; drop split"
            )
        return self


@dataclasses.dataclass(frozen=True)
class BenchmarkFiles:
    """The files of one benchmark: its layout and the corpus, queries and qrels paths."""

    layout: str
    corpus: Path
    queries: Path
    qrels: Path


def benchmark_files(folder: Path, options: BeirOptions) -> BenchmarkFiles:
    """The layout and files of ``folder`` under ``options`` (files named by options win over the layout's)."""
    if not folder.is_dir():
        raise DatasetError(f"benchmark folder not found: {folder}; set the beir source's 'path' to its folder")
    given = (options.corpus_file, options.queries_file, options.qrels_file)
    layout = options.layout
    if layout == "auto":
        layout = "beir" if all(given) else detect_layout(folder, options)
    if options.split is not None and layout not in _SPLIT_LAYOUTS:
        raise DatasetError(
            f"split = '{options.split}' applies to the beir and mteb layouts; the {layout} layout of {folder} has "
            "one qrels file: set qrels_file to the split's qrels file instead"
        )
    split = options.split or "test"
    paths = [
        folder / name if name else _default_file(folder, candidates, split)
        for name, candidates in zip(given, DEFAULT_FILES[layout])
    ]
    return BenchmarkFiles(layout, *paths)


def detect_layout(folder: Path, options: BeirOptions) -> str:
    """The layout told by the files present; an error says what was looked for and what the folder holds."""
    split = options.split or "test"
    markers = (
        ("trec", "topics.txt"),
        ("ir_datasets", "docs.jsonl"),
        ("beir", f"qrels/{split}.tsv"),
        ("mteb", f"qrels/{split}.jsonl"),
    )
    for layout, marker in markers:
        if _exists(folder / marker):
            return layout
    if options.qrels_file and _exists(folder / "corpus.jsonl"):
        return "beir"
    looked = ", ".join(f"{marker} ({layout})" for layout, marker in markers)
    hint = "; set layout and the *_file options to read other names"
    splits = sorted(p.name for p in (folder / "qrels").glob("*") if p.is_file()) if (folder / "qrels").is_dir() else []
    if splits:
        hint = f"; qrels/ holds {', '.join(splits)}: set split to one of them" + hint
    holds = ", ".join(sorted(p.name + ("/" if p.is_dir() else "") for p in folder.iterdir())[:10]) or "nothing"
    raise DatasetError(f"{folder}: no benchmark layout recognised: looked for {looked}; the folder holds {holds}{hint}")


def _exists(path: Path) -> bool:
    return path.is_file() or path.with_name(path.name + ".gz").is_file()


def _default_file(folder: Path, candidates: tuple[str, ...], split: str) -> Path:
    """The first candidate present (plain or ``.gz``), else the first plain one (reading it reports it missing)."""
    for name in candidates:
        path = folder / name.format(split=split)
        for option in (path, path.with_name(path.name + ".gz")):
            if option.is_file():
                return option
    return folder / candidates[0].format(split=split)


def _is_jsonl(path: Path) -> bool:
    return path.name.endswith((".jsonl", ".jsonl.gz"))


class BeirSource(DatasetSource):
    """Reads a public retrieval benchmark as published: BEIR, MTEB, ir_datasets export or TREC topics/qrels."""

    name = "beir"
    Options = BeirOptions

    def files(self) -> BenchmarkFiles:
        """The benchmark's layout and files."""
        return benchmark_files(self.context.resolve(self.options.path), self.options)

    def samples(self) -> Iterator[Sample]:
        """One sample per query with judgements (BEIR's convention), in the order of the queries file."""
        files = self.files()
        qrels = read_qrels_file(files.qrels)
        self._check_documents(qrels, files)
        seen: dict[str, int] = {}
        skipped, no_relevant = _Tally(), _Tally()
        for line, qid, text, extras in self._queries(files.queries):
            if qid in seen:
                raise DatasetError(
                    f"{files.queries}, line {line}: duplicate query id '{qid}' (first on line {seen[qid]}); "
                    "make every query id unique"
                )
            seen[qid] = line
            judged = qrels.get(qid)
            if judged is None:
                skipped.add(qid)
                continue
            sample = make_sample(qid, text, judged, extras)
            if not sample.reference_context_ids:
                no_relevant.add(qid)
            yield sample
        self._report_queries(files, qrels, seen, skipped, no_relevant)

    def documents(self) -> Iterator[Document]:
        """The corpus, streamed; a repeated document id is an error naming both lines."""
        file = self.files().corpus
        seen = SeenKeys()
        try:
            for line, document in corpus_documents(file):
                _no_duplicate_document(seen.add(document.id, line), file)
                yield document
            _no_duplicate_document(seen.flush(), file)
        finally:
            seen.close()

    def _queries(self, file: Path) -> Iterator[tuple[int, str, str, dict[str, Any]]]:
        """The queries of ``file``: JSONL by its name, TREC topics otherwise."""
        field = self.options.query_field
        if _is_jsonl(file):
            return jsonl_queries(file, field or "text")
        if field is not None and field not in TOPIC_FIELDS:
            raise DatasetError(
                f"{file} holds TREC topics: query_field must be one of {', '.join(TOPIC_FIELDS)}, not '{field}'"
            )
        return trec_topics(file, field or "title")

    def _check_documents(self, qrels: Qrels, files: BenchmarkFiles) -> None:
        """Judged documents missing from the corpus: a warning with counts, an error when none is there."""
        corpus = corpus_ids(files.corpus)
        judged = {docid for judgements in qrels.values() for docid in judgements}
        unknown = sorted(judged - corpus)
        if not unknown:
            return
        pairs = sum(docid not in corpus for judgements in qrels.values() for docid in judgements)
        examples = ", ".join(repr(docid) for docid in unknown[:_EXAMPLES])
        if len(unknown) == len(judged):
            raise DatasetError(
                f"{files.qrels}: none of the {len(judged)} judged documents is in {files.corpus} (qrels: {examples}; "
                f"corpus: {', '.join(repr(d) for d in sorted(corpus)[:_EXAMPLES])}); the files do not belong together"
            )
        self.context.warn(
            f"{files.qrels}: {pairs} judgement(s) name {len(unknown)} document(s) missing from {files.corpus} "
            f"(e.g. {examples}); they can never be retrieved (BEIR keeps them: recall counts them as missed)"
        )

    def _report_queries(
        self, files: BenchmarkFiles, qrels: Qrels, seen: dict[str, int], skipped: _Tally, no_relevant: _Tally
    ) -> None:
        """Warnings (or an error) once the queries are read."""
        unknown = sorted(qid for qid in qrels if qid not in seen)
        if len(unknown) == len(qrels):
            queries = ", ".join(map(repr, list(seen)[:_EXAMPLES]))
            raise DatasetError(
                f"{files.qrels}: none of its {len(qrels)} queries is in {files.queries} (qrels: "
                f"{', '.join(map(repr, unknown[:_EXAMPLES]))}; queries: {queries}); the files do not belong together"
            )
        if unknown:
            self.context.warn(
                f"{files.qrels}: {len(unknown)} judged query id(s) are not in {files.queries} (e.g. "
                f"{', '.join(map(repr, unknown[:_EXAMPLES]))}); their judgements are not used"
            )
        if skipped.count:
            self.context.warn(
                f"{files.queries}: {skipped.count} of {len(seen)} queries have no judgement in {files.qrels.name} "
                f"(e.g. {skipped}); skipped, as BEIR does"
            )
        if no_relevant.count:
            self.context.warn(
                f"{files.qrels}: {no_relevant.count} queries have judgements but no relevant document (every grade "
                f"<= 0, e.g. {no_relevant}); every IR metric scores them 0, as trec_eval does"
            )


@dataclasses.dataclass
class _Tally:
    """A count of ids with the first few as examples (str: the examples, quoted)."""

    count: int = 0
    examples: list[str] = dataclasses.field(default_factory=list)

    def add(self, key: str) -> None:
        self.count += 1
        if len(self.examples) < _EXAMPLES:
            self.examples.append(key)

    def __str__(self) -> str:
        return ", ".join(map(repr, self.examples))


def make_sample(qid: str, text: str, judged: dict[str, int | float], extras: dict[str, Any]) -> Sample:
    """The sample of one judged query: relevant ids (grade > 0) by grade descending then id; every grade in
    ``metadata["relevance"]``; the query's other keys (a nested ``metadata`` object merged in) kept as metadata."""
    extras = dict(extras)
    nested = extras.pop("metadata", None)
    metadata = {**extras, **nested} if isinstance(nested, dict) else extras
    if nested is not None and not isinstance(nested, dict):
        metadata["metadata"] = nested
    relevant = sorted((docid for docid, grade in judged.items() if grade > 0), key=lambda d: (-judged[d], d))
    metadata["relevance"] = dict(judged)
    return Sample(question_id=qid, question=text, reference_context_ids=relevant, metadata=metadata)


def corpus_ids(file: Path) -> set[str]:
    """The document ids of a JSONL corpus (records parsed for their id only)."""
    return {record_id(record, DOC_ID_KEYS, file, line) for line, record in jsonl_records(file)}


def _no_duplicate_document(duplicate, file: Path) -> None:
    if duplicate is not None:
        raise DatasetError(
            f"{file}, line {duplicate.second}: duplicate document id '{duplicate.key}' (first on line "
            f"{duplicate.first}); document ids must be unique"
        )


@hookimpl
def register_dataset_sources(register):
    """Register the beir dataset source."""
    register(BeirSource)
