"""Retrieval-only RAG: the ranked top-k chunks for every question, with their scores, and no answer.

For retrieval benchmarks (BEIR, MTEB, TREC): no generator is configured and no model is called, so a run costs
the retrieval and the scoring only. The output holds the ranked chunk ids, their document ids and the retriever's
scores (``trace["scores"]``, as the retriever gives them: trec_eval orders by them); the chunk texts are in the
output for metrics computed in the same process, and the results store keeps them by reference (docs/results.md).

The system gives no answer (``answers = False``): metrics and judges that read the answer are stored as unscored
with the reason "system 'X' is retrieval-only: it gives no answer", never scored on an empty answer.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Corpus, RAGOutput, RAGSystem, Retrieved, Role, Sample, hookimpl
from ragassay.reference_rags.naive import index_corpus

#: Default number of chunks ranked per question: BEIR's and MTEB's headline measure is nDCG@10.
DEFAULT_TOP_K = 10


class RetrievalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(
        DEFAULT_TOP_K,
        ge=1,
        le=10000,
        description="Number of chunks ranked for every question. 10 covers nDCG@10 (BEIR's headline measure); "
        "set 100 for recall@100 or MAP@100 as BEIR reports them.",
    )


class RetrievalRAG(RAGSystem):
    """Retrieval only: rank the top-k chunks for every question and store their ids and scores; no answer."""

    name = "retrieval"
    retrieval = "always"
    answers = False
    Options = RetrievalOptions
    roles = {
        "chunker": Role("chunker", default="recursive", description="Splits the corpus into chunks."),
        "retriever": Role("retriever", description="Ranks the top-k chunks for a question."),
    }

    def prepare(self, corpus: Corpus) -> None:
        index_corpus(corpus, self.parts["chunker"], self.parts["retriever"])

    async def answer(self, sample: Sample) -> RAGOutput:
        return await self.answer_from(sample, await self.retrieve_step(sample))

    async def retrieve_step(self, sample: Sample) -> Retrieved:
        """The top-k chunks for the question, with the retriever's scores and trace."""
        hits, retrieval = await self.parts["retriever"].aretrieve_traced(sample.question, self.options.top_k)
        return Retrieved([h.chunk for h in hits], [float(h.score) for h in hits], retrieval)

    async def answer_from(self, sample: Sample, retrieved: Retrieved) -> RAGOutput:
        """The ranked chunks of ``retrieved`` as the output (no answer)."""
        chunks = retrieved.chunks
        return RAGOutput(
            answer="",
            contexts=[c.text for c in chunks],
            context_ids=[c.id for c in chunks],
            context_document_ids=[c.document_id for c in chunks],
            retrieved=True,
            trace={"scores": [float(score) for score in retrieved.scores], "retrieval": retrieved.trace},
        )


@hookimpl
def register_rags(register):
    register(RetrievalRAG)
