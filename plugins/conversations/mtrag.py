"""MTRAG's published files as dataset sources, read as they are (docs/conversations.md).

MTRAG (IBM/mt-rag-benchmark, Apache-2.0; the format as of commit cc5b1d4) publishes one benchmark in three shapes;
each is a source here:

``mtrag_tasks``
    A generation/RAG task file (``mtrag-human/generation_tasks/reference.jsonl``, ``RAG.jsonl``,
    ``reference+RAG.jsonl``, MTRAG-UN's ``reference.jsonl``, ``scripts/evaluation/sample_data/*.jsonl``): one
    JSON object per line, one sample per task (a turn with the conversation before it). See
    :func:`ragassay.plugins.conversations.mtrag_records.task_sample`.
``mtrag_conversations``
    ``mtrag-human/conversations/conversations.json`` (a JSON list of conversations): one sample per user turn.
    See :func:`ragassay.plugins.conversations.mtrag_records.conversation_samples`.
``mtrag_retrieval``
    A domain of ``mtrag-human/retrieval_tasks/`` (BEIR-style): its corpus, qrels and one of its query files
    (last turn, rewrite, or all questions so far); see :mod:`ragassay.plugins.conversations.mtrag_retrieval`.

Every sample is a conversation turn: ``conversation_id``, ``turn`` (1-based among the user's turns),
``question_id`` = ``conversation_id::turn`` (MTRAG's own id kept as ``mtrag_task_id``). A row that cannot be read
is skipped with a warning naming the file, the line and what is wrong; a file with no readable row is an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragassay import DatasetError, DatasetSource, Sample, describe_json_error, hookimpl
from ragassay.plugins.beir_files import jsonl_records, numbered_lines
from ragassay.plugins.conversations.mtrag_records import RowError, conversation_samples, task_sample
from ragassay.plugins.conversations.mtrag_retrieval import MtragRetrievalSource

_EXAMPLES = 3


class _Skipped:
    """The rows skipped so far: one warning with the count and the first few reasons."""

    def __init__(self, file: Path):
        self.file = file
        self.reasons: list[str] = []

    def add(self, where: str, reason: str) -> None:
        self.reasons.append(f"{where}: {reason}")

    def report(self, source: DatasetSource, read: int) -> None:
        if not self.reasons:
            return
        if not read:
            raise DatasetError(
                f"{self.file}: no row could be read as an MTRAG record ({'; '.join(self.reasons[:_EXAMPLES])}); "
                "check that the file is one of MTRAG's and the source is the right one"
            )
        shown = "; ".join(self.reasons[:_EXAMPLES])
        source.context.warn(
            f"{self.file}: {len(self.reasons)} row(s) could not be read and were skipped ({shown}); fix them to "
            "evaluate those turns"
        )


class MtragTasksOptions(BaseModel):
    """Options of the ``mtrag_tasks`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The task JSONL file (e.g. reference.jsonl, RAG.jsonl), relative to the project.")
    contexts: Literal["reference", "none"] = Field(
        "reference",
        description="'reference': a task's contexts are its reference passages (reference.jsonl, task B input); "
        "'none': they are not (RAG.jsonl holds one retriever's top 5): their ids are kept as mtrag_context_ids.",
    )


class MtragTasksSource(DatasetSource):
    """MTRAG's generation/RAG task JSONL read as published: one sample per task (a conversation turn)."""

    name = "mtrag_tasks"
    Options = MtragTasksOptions

    def samples(self) -> Iterator[Sample]:
        """One sample per readable line, in file order; unreadable lines are skipped with a warning."""
        file = self.context.resolve(self.options.path)
        skipped, seen = _Skipped(file), {}
        for line, record in _lenient_jsonl(file, skipped):
            try:
                sample = task_sample(record, self.options.contexts)
            except (RowError, ValueError) as exc:
                skipped.add(f"line {line}", _reason(exc))
                continue
            if sample.question_id in seen:
                skipped.add(
                    f"line {line}", f"turn {sample.question_id} again (first on line {seen[sample.question_id]})"
                )
                continue
            seen[sample.question_id] = line
            yield sample
        skipped.report(self, len(seen))


class MtragConversationsOptions(BaseModel):
    """Options of the ``mtrag_conversations`` dataset source."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="conversations.json (a JSON list of conversations), relative to the project.")


class MtragConversationsSource(DatasetSource):
    """MTRAG's conversations file read as published: one sample per user turn of every conversation."""

    name = "mtrag_conversations"
    Options = MtragConversationsOptions

    def samples(self) -> Iterator[Sample]:
        """The turns of each conversation in order; a conversation that cannot be read is skipped with a warning."""
        file = self.context.resolve(self.options.path)
        conversations = _json_list(file)
        skipped, read = _Skipped(file), 0
        for index, record in enumerate(conversations):
            try:
                if not isinstance(record, dict):
                    raise RowError(f"expected a conversation object, got {type(record).__name__}")
                samples = conversation_samples(record, index)
            except (RowError, ValueError) as exc:
                skipped.add(f"conversation {index + 1}", _reason(exc))
                continue
            read += 1
            yield from samples
        skipped.report(self, read)


def _lenient_jsonl(file: Path, skipped: _Skipped) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line, object) per line of a JSONL file; a line that is not a JSON object is recorded in ``skipped``."""
    empty = True
    for number, text in numbered_lines(file):
        if not text.strip():
            continue
        empty = False
        try:
            record = json.loads(text)
        except json.JSONDecodeError as exc:
            skipped.add(f"line {number}", describe_json_error(exc))
            continue
        if not isinstance(record, dict):
            skipped.add(f"line {number}", f"expected a JSON object, got {type(record).__name__}")
            continue
        yield number, record
    if empty:
        raise DatasetError(f"{file} is empty: it holds no MTRAG task; check the path")


def _json_list(file: Path) -> list[Any]:
    """The JSON list of a conversations file (a JSONL file of conversations is accepted too)."""
    text = "\n".join(line for _, line in numbered_lines(file))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        try:
            return [record for _, record in jsonl_records(file)]
        except DatasetError:
            raise DatasetError(f"{file}: {describe_json_error(exc)}; the conversations file is a JSON list") from None
    if not isinstance(data, list):
        raise DatasetError(f"{file}: expected a JSON list of conversations, got {type(data).__name__}")
    if not data:
        raise DatasetError(f"{file} holds no conversation; check the path")
    return data


def _reason(exc: Exception) -> str:
    """A row error's message on one line (a pydantic error's first line and first problem)."""
    return " ".join(str(exc).split())[:300]


@hookimpl
def register_dataset_sources(register):
    """Register MTRAG's dataset sources: mtrag_tasks, mtrag_conversations, mtrag_retrieval."""
    register(MtragTasksSource)
    register(MtragConversationsSource)
    register(MtragRetrievalSource)
