"""Dataset creation from documents (Kenneweg et al., seeds/003 section III; INFO thesis, seeds/002 Table 4.4).

- ``generated_qa``: an LLM writes questions (optionally with reference answers) about each document or chunk;
  the source text becomes the sample's reference context and its id the reference_context_id.
- ``cutoff``: keeps documents dated after a knowledge cut-off (a metadata field), then optionally asks an LLM,
  through a forced boolean tool call, whether most of the content is about events after the cut-off (the
  paper's second filter). Samples whose reference documents were dropped are dropped with them.

Both call models through any generator that declares ``supports_chat`` (openai, anthropic, local); the
response cache makes a re-run free and reproducible, and with temperature > 0 every question of a document is
its own sample index.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import ChunkerRef, DatasetError, DatasetSource, DatasetSourceRef, Document, GeneratorRef, Sample, hookimpl

CREATIVE_QUESTION_PROMPT = "Generate a creative question about the contents of the following text: {text}."
CUTOFF_PROMPT = (
    "Answer yes or no by calling the tool: is the majority of the information in the following "
    "article about a topic that happened after {cutoff}? This may include politics or sports in "
    "that time period but also, for example, new computing libraries published since.\n\n{text}"
)


def run_sync(coroutine: Any) -> Any:
    """Run a coroutine from synchronous code, also when an event loop is already running (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _chat_generator(context: Any, ref: GeneratorRef, who: str) -> Any:
    return context.build(ref).require_chat(who)


def _documents(context: Any, source: DatasetSourceRef, who: str) -> list[Document]:
    docs = list(context.build(source).documents())
    if not docs:
        raise DatasetError(f"{who}: the source yielded no documents. Check its options.")
    return docs


class GeneratedQAOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: DatasetSourceRef = Field(
        description="Dataset source providing the documents, e.g. "
        "{ name = 'files', options = { documents = ['docs/*.md'] } }."
    )
    generator: GeneratorRef = Field(description="LLM generator writing the questions: a name or { name, options }.")
    prompt: str = Field(CREATIVE_QUESTION_PROMPT, description="Question prompt; {text} is the document or chunk.")
    questions_per_document: int = Field(1, ge=1, le=100, description="Questions asked per document (or chunk).")
    with_answers: bool = Field(False, description="Also ask for a reference answer (structured output).")
    temperature: float = Field(1.0, ge=0, le=2, description="Sampling temperature (the paper used a high one).")
    chunker: ChunkerRef | None = Field(
        None, description="If set, ask about each chunk of this chunker instead of whole documents."
    )
    max_chars: int = Field(12000, ge=100, description="Text beyond this many characters is cut from the prompt.")


class QuestionAnswer(BaseModel):
    """A question about the text and its answer, taken from the text."""

    question: str = Field(description="The question.")
    answer: str = Field(description="The answer, as stated in the text.")


class GeneratedQASource(DatasetSource):
    """Questions (and optionally answers) written by an LLM about each document or chunk."""

    name = "generated_qa"
    Options = GeneratedQAOptions

    def documents(self) -> Iterator[Document]:
        return iter(_documents(self.context, self.options.source, "generated_qa"))

    def samples(self) -> Iterator[Sample]:
        units = self._units()
        return iter(run_sync(self._generate(units)))

    def _units(self) -> list[tuple[str, str, str]]:
        """(reference id, document id, text) per document, or per chunk when a chunker is set."""
        docs = _documents(self.context, self.options.source, "generated_qa")
        if self.options.chunker is None:
            return [(d.id, d.id, d.text) for d in docs]
        chunker = self.context.build(self.options.chunker)
        return [(c.id, d.id, c.text) for d in docs for c in chunker.chunk(d)]

    async def _generate(self, units: list[tuple[str, str, str]]) -> list[Sample]:
        generator = _chat_generator(self.context, self.options.generator, "generated_qa")
        jobs = [(unit, i) for unit in units for i in range(self.options.questions_per_document)]
        samples = await asyncio.gather(*(self._one(generator, unit, i) for unit, i in jobs))
        return [s for s in samples if s is not None]

    async def _one(self, generator: Any, unit: tuple[str, str, str], index: int) -> Sample | None:
        ref_id, doc_id, text = unit
        prompt = self.options.prompt.format(text=text[: self.options.max_chars])
        if self.options.with_answers:
            prompt += "\nAlso give the answer, as stated in the text."
        params = {"temperature": self.options.temperature}
        response = await generator.chat(
            [{"role": "user", "content": prompt}],
            params=params,
            sample_index=index,
            response_model=QuestionAnswer if self.options.with_answers else None,
        )
        question = response.parsed.question if self.options.with_answers else response.text.strip()
        if not question:
            return None
        return Sample(
            question_id=f"{ref_id}#q{index}",
            question=question,
            reference_contexts=[text],
            reference_context_ids=[ref_id],
            reference_answers=[response.parsed.answer] if self.options.with_answers else [],
            metadata={"document_id": doc_id, "generated_by": generator.name},
        )


class CutoffOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: DatasetSourceRef = Field(description="Dataset source whose documents (and samples) are filtered.")
    cutoff: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$", description="Knowledge cut-off, 'YYYY-MM' or 'YYYY-MM-DD'.")
    date_field: str = Field("date", description="Document metadata field holding an ISO date.")
    llm_filter: GeneratorRef | None = Field(
        None,
        description="If set, an LLM generator asked whether most of "
        "each kept document is about events after the cut-off (forced boolean "
        "tool call).",
    )
    prompt: str = Field(CUTOFF_PROMPT, description="Filter prompt; {cutoff} and {text} are filled in.")
    max_chars: int = Field(8000, ge=100, description="Text beyond this many characters is cut from the prompt.")


class CutoffSource(DatasetSource):
    """Documents dated after a knowledge cut-off, optionally confirmed by an LLM; samples follow their documents."""

    name = "cutoff"
    Options = CutoffOptions

    def documents(self) -> Iterator[Document]:
        return iter(self._kept())

    def samples(self) -> Iterator[Sample]:
        kept = {d.id for d in self._kept()}
        for sample in self.context.build(self.options.source).samples():
            if sample.reference_context_ids and set(sample.reference_context_ids) <= kept:
                yield sample

    def _kept(self) -> list[Document]:
        if not hasattr(self, "_cache"):
            dated = [d for d in _documents(self.context, self.options.source, "cutoff") if self._after(d)]
            self._cache = run_sync(self._llm_filter(dated)) if self.options.llm_filter is not None else dated
        return self._cache

    def _after(self, document: Document) -> bool:
        value = str(document.metadata.get(self.options.date_field, ""))
        if not value:
            return False  # undated documents cannot be shown to be after the cut-off
        return value[: len(self.options.cutoff)] > self.options.cutoff

    async def _llm_filter(self, documents: list[Document]) -> list[Document]:
        from ragassay.llm import ToolSpec

        generator = _chat_generator(self.context, self.options.llm_filter, "cutoff")
        tool = ToolSpec(
            name="after_cutoff",
            description="Report whether the article is mostly about events after the cut-off.",
            parameters={
                "type": "object",
                "required": ["after_cutoff"],
                "properties": {"after_cutoff": {"type": "boolean"}},
            },
        )

        async def keep(document: Document) -> bool:
            prompt = self.options.prompt.format(
                cutoff=self.options.cutoff, text=document.text[: self.options.max_chars]
            )
            response = await generator.chat(
                [{"role": "user", "content": prompt}], tools=[tool], tool_choice="after_cutoff"
            )
            call = response.tool_call("after_cutoff")
            return bool(call and call.arguments.get("after_cutoff") is True)

        verdicts = await asyncio.gather(*(keep(d) for d in documents))
        return [d for d, ok in zip(documents, verdicts) if ok]


@hookimpl
def register_dataset_sources(register):
    register(GeneratedQASource)
    register(CutoffSource)
