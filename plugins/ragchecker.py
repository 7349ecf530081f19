"""RAGChecker's files in ragassay: the ``ragchecker`` dataset source and the ``ragchecker`` replay rag.

Both read a RAGChecker input or output JSON file (``{"results": [{query_id, query, gt_answer, response,
retrieved_context: [{doc_id, text}], ...}]}``, :mod:`ragassay.plugins.claims.ragchecker_format`):

- the dataset source gives one sample per result: ``question_id`` = ``query_id``, ``question`` = ``query``,
  ``reference_answers`` = ``[gt_answer]`` (none when it is empty); a repeated ``query_id`` (RAGChecker allows
  it) is made unique as ``<query_id>#<n>``, with a warning;
- the rag replays each result as the system's output: ``answer`` = ``response``, ``contexts`` and
  ``context_ids`` = the retrieved texts and doc ids; when the result holds RAGChecker's claims and checks (an
  output file), ``trace["ragchecker"]`` is their :class:`~ragassay.plugins.claims.model.ClaimChecks` JSON, so
  the claim metrics score them without any model call, and ``trace["ragchecker_metrics"]`` the per-result metrics
  RAGChecker stored.

Errors name the file and the result's index (``checking_outputs.json, results[2]: ...``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Corpus, DatasetSource, RAGOutput, RAGSystem, Sample, hookimpl
from ragassay.plugins.claims.ragchecker_format import checks_of, chunk_ids, read_results, result_ids


class RAGCheckerSource(DatasetSource):
    """Samples from a RAGChecker input or output file: query, query_id and gt_answer of each result."""

    name = "ragchecker"

    class Options(BaseModel):
        """Options of the ragchecker dataset source."""

        model_config = ConfigDict(extra="forbid")

        path: str = Field(description="RAGChecker JSON file (input or output layout), relative to the project folder.")

    def samples(self) -> Iterator[Sample]:
        """One sample per result, in the file's order (a repeated ``query_id`` is made unique, with a warning:
        :func:`~ragassay.plugins.claims.ragchecker_format.result_ids`)."""
        path = self.context.resolve(self.options.path)
        results = read_results(path)
        ids, notes = result_ids(results)
        for note in notes:
            self.context.warn(f"{path.name}: {note}")
        for question_id, result in zip(ids, results):
            answer = result["gt_answer"]
            yield Sample(
                question_id=question_id,
                question=result["query"],
                reference_answers=[answer] if answer.strip() else [],
            )


class RAGCheckerReplay(RAGSystem):
    """Replays the responses, retrieved contexts and (when stored) claims and checks of a RAGChecker file."""

    name = "ragchecker"
    retrieval = "always"

    class Options(BaseModel):
        """Options of the ragchecker replay rag."""

        model_config = ConfigDict(extra="forbid")

        path: str = Field(description="RAGChecker JSON file (input or output layout), relative to the project folder.")
        checks: bool = Field(
            True,
            description="Carry the file's stored claims and checks in trace['ragchecker'] (false: replay the "
            "responses only, so a claim checker checks them anew).",
        )

    @classmethod
    def content_key(cls, options: BaseModel, context) -> str | None:
        """sha256 of the file: an edited file is a new system, never a resume of the old outputs."""
        path = context.resolve(options.path)
        if not path.is_file():
            return None
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()

    def prepare(self, corpus: Corpus) -> None:
        """Read and validate the whole file (claims and checks included) before any answer."""
        self.path = self.context.resolve(self.options.path)
        self.outputs: dict[str, RAGOutput] = {}
        results = read_results(self.path)
        for index, (question_id, result) in enumerate(zip(result_ids(results)[0], results)):
            where = f"{self.path.name}, results[{index}]"
            checks = checks_of(result, where) if self.options.checks else None
            trace = {}
            if checks is not None:
                trace["ragchecker"] = checks.model_dump(mode="json")
                if isinstance(result.get("metrics"), dict) and result["metrics"]:
                    trace["ragchecker_metrics"] = result["metrics"]
            docs = result.get("retrieved_context") or []
            self.outputs[question_id] = RAGOutput(
                answer=result["response"],
                contexts=[doc["text"] for doc in docs],
                context_ids=chunk_ids(result),
                retrieved=bool(docs),
                trace=trace,
            )

    def check_samples(self, samples: Iterable[Sample]) -> list[str]:
        """Warnings for results that match no sample (a sample with no result fails in :meth:`answer`)."""
        extra = sorted(set(self.outputs) - {s.question_id for s in samples})
        if not extra:
            return []
        shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        return [f"{self.path.name}: {len(extra)} result(s) match no sample: {shown}"]

    async def answer(self, sample: Sample) -> RAGOutput:
        found = self.outputs.get(sample.question_id)
        if found is None:
            raise LookupError(f"no result with query_id '{sample.question_id}' in {self.path.name}")
        return found


@hookimpl
def register_dataset_sources(register):
    register(RAGCheckerSource)


@hookimpl
def register_rags(register):
    register(RAGCheckerReplay)
