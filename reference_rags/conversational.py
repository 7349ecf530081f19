"""Conversational naive RAG: the naive RAG for a turn of a conversation (``Sample.history`` + ``Sample.question``).

The ``query`` option decides what the retriever is sent:

- ``"last_turn"``: the turn's own text (``"and who manages it?"``), as a single-question system would;
- ``"history"``: the user turns of the history and the turn, joined by newlines (the agent turns too with
  ``agent_turns = true``), the "full history" query of MTRAG's retrieval tasks;
- ``"rewrite"``: a standalone question written by a model (``rewriter``, default the system's generator) from the
  history and the turn with :data:`CONDENSE_QUESTION_PROMPT`, LangChain's condense-question prompt
  (``langchain/chains/conversational_retrieval/prompts.py``, ``CONDENSE_QUESTION_PROMPT``; the history written as
  ``_get_chat_history`` of ``conversational_retrieval/base.py`` writes it: one ``Human: ...`` or ``Assistant: ...``
  line per turn).

The answer is generated as the naive RAG's (numbered sources, cite as [n]), with the history given to the generator
as the chat turns before the question. ``RAGOutput.query`` holds the query sent to the retriever whenever it is not
the question itself; ``trace["rewrite"]`` the rewrite prompt, the model's reply and its usage. On a turn without
history (a single question) every mode is the naive RAG: same query, same messages, no rewrite call.

An extractive generator reads the request's ``question`` (it cannot read the history): that is the rewrite in
``"rewrite"`` mode (as LangChain passes the condensed question to its answer chain by default) and the turn's
text otherwise.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import (
    ConfigError,
    Corpus,
    GenerationRequest,
    GeneratorRef,
    RAGOutput,
    Retrieved,
    Sample,
    TokenUsage,
    Turn,
    hookimpl,
)
from ragassay.llm import LLMGenerator

from .naive import DEFAULT_SYSTEM_PROMPT, NaiveRAG, build_messages

#: LangChain's condense-question prompt, verbatim (``langchain/chains/conversational_retrieval/prompts.py``).
CONDENSE_QUESTION_PROMPT = (
    "Given the following conversation and a follow up question, rephrase the follow up question to be a standalone "
    "question, in its original language.\n\nChat History:\n{chat_history}\nFollow Up Input: {question}\n"
    "Standalone question:"
)
_ROLES = {"user": "Human", "agent": "Assistant"}  # LangChain's _ROLE_MAP
_CHAT_ROLES = {"user": "user", "agent": "assistant"}
_KEY = "conversation"  # the trace key that carries the query from retrieve_step to answer_from


class ConversationalOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(5, ge=1, le=1000, description="Number of chunks retrieved for every turn.")
    system_prompt: str = Field(DEFAULT_SYSTEM_PROMPT, description="System message given to the generator.")
    query: Literal["last_turn", "history", "rewrite"] = Field(
        "history",
        description="What the retriever is sent: 'last_turn' (the turn's text only), 'history' (the user turns "
        "of the history and the turn, joined), 'rewrite' (a standalone question written by the rewriter model).",
    )
    agent_turns: bool = Field(
        False, description="query = 'history' only: join the agent's turns of the history as well as the user's."
    )
    rewriter: GeneratorRef | None = Field(
        None,
        description="query = 'rewrite' only: the language model that writes the standalone question (default: "
        "the system's generator, which must then be a language model).",
    )
    rewrite_prompt: str = Field(
        CONDENSE_QUESTION_PROMPT,
        description="query = 'rewrite' only: the rewrite prompt, with {chat_history} and {question} (default: "
        "LangChain's CONDENSE_QUESTION_PROMPT).",
    )

    @field_validator("rewrite_prompt")
    @classmethod
    def _placeholders(cls, value: str) -> str:
        missing = [p for p in ("{chat_history}", "{question}") if p not in value]
        if missing:
            raise ValueError(f"rewrite_prompt lacks {' and '.join(missing)}: the prompt must show both")
        return value


class ConversationalNaiveRAG(NaiveRAG):
    """Naive RAG for a conversation turn: retrieve with the last turn, the history, or a model's rewrite."""

    name = "conversational_naive"
    retrieval = "always"
    Options = ConversationalOptions
    roles = NaiveRAG.roles

    def prepare(self, corpus: Corpus) -> None:
        if self.options.query == "rewrite":
            self.rewriter = self._rewriter()
        super().prepare(corpus)

    def _rewriter(self) -> Any:
        """The rewriter model: the ``rewriter`` option built, or the system's generator; a language model."""
        ref = self.options.rewriter
        rewriter = self.context.build(ref) if ref is not None else self.parts["generator"]
        if not rewriter.supports_chat:
            which = f"rewriter '{ref.name}'" if ref is not None else f"generator '{rewriter.name}' (the rewriter)"
            raise ConfigError(
                f"rag '{self.name}' with query = 'rewrite': the {which} is not a language model, so it cannot "
                "write a standalone question. Set options.rewriter to an LLM generator (openai, anthropic, local), "
                "or use query = 'history' or 'last_turn'"
            )
        return rewriter

    async def answer(self, sample: Sample) -> RAGOutput:
        return await self.answer_from(sample, await self.retrieve_step(sample))

    async def retrieve_step(self, sample: Sample) -> Retrieved:
        """The top-k chunks for the turn's query; the query and the rewrite (prompt, reply, usage) ride in the
        trace under ``"conversation"`` to :meth:`answer_from`."""
        query, rewrite = await self.query_for(sample)
        hits, retrieval = await self.parts["retriever"].aretrieve_traced(query, self.options.top_k)
        trace = {**retrieval, _KEY: {"query": query, "rewrite": rewrite}}
        return Retrieved([hit.chunk for hit in hits], [hit.score for hit in hits], trace)

    async def query_for(self, sample: Sample) -> tuple[str, dict[str, Any] | None]:
        """The retrieval query of ``sample`` and, in ``"rewrite"`` mode, the rewrite's record (prompt, reply,
        usage, generator trace); the question itself when the turn has no history."""
        mode = self.options.query
        if not sample.history or mode == "last_turn":
            return sample.question, None
        if mode == "history":
            return history_query(sample.history, sample.question, self.options.agent_turns), None
        prompt = rewrite_prompt(self.options.rewrite_prompt, sample.history, sample.question)
        generation = await self.rewriter.generate(
            GenerationRequest(question=sample.question, messages=[{"role": "user", "content": prompt}])
        )
        reply = generation.text.strip()
        usage = generation.usage.model_dump(mode="json")
        record = {"prompt": prompt, "reply": generation.text, "usage": usage, "generator": generation.raw}
        if not reply:
            record["fallback"] = "the rewriter replied with nothing: retrieved with the turn's text"
            return sample.question, record
        return reply, record

    async def answer_from(self, sample: Sample, retrieved: Retrieved) -> RAGOutput:
        """Generate the answer to the turn from ``retrieved``, with the history in the prompt."""
        retrieval = dict(retrieved.trace)
        said = retrieval.pop(_KEY, None) or {"query": sample.question, "rewrite": None}
        query, rewrite = said["query"], said["rewrite"]
        chunks = retrieved.chunks
        messages = conversation_messages(self.options.system_prompt, sample, [c.text for c in chunks])
        question = query if rewrite is not None else sample.question  # what an extractive reader reads
        generation = await self.parts["generator"].generate(
            GenerationRequest(question=question, contexts=chunks, messages=messages)
        )
        usage = generation.usage
        trace: dict[str, Any] = {
            "scores": [round(score, 6) for score in retrieved.scores],
            "generator": generation.raw,
            "retrieval": retrieval,
            "query_mode": self.options.query,
        }
        if rewrite is not None:
            usage = usage + TokenUsage.model_validate(rewrite["usage"])
            trace["rewrite"] = rewrite
        return RAGOutput(
            answer=generation.text,
            contexts=[c.text for c in chunks],
            context_ids=[c.id for c in chunks],
            context_document_ids=[c.document_id for c in chunks],
            retrieved=True,
            query=query if query != sample.question else None,
            usage=usage,
            trace=trace,
        )

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """The answer call (as the naive RAG's, the history's characters added), and the rewrite call of a turn
        with history in ``"rewrite"`` mode."""
        generator = self.parts["generator"]
        if not isinstance(generator, LLMGenerator):
            return generator.call_pattern(sample, hints)
        if hints.context_chars is None:
            return None
        history = sum(len(t.text) for t in sample.history)
        answer = generator.calls(self.prompt_chars(self.options.system_prompt, sample, hints) + history)
        if self.options.query != "rewrite" or not sample.history:
            return answer
        ref = self.options.rewriter
        rewriter = self.context.build(ref) if ref is not None else generator
        prompt = rewrite_prompt(self.options.rewrite_prompt, sample.history, sample.question)
        rewrite = rewriter.calls(len(prompt)) if isinstance(rewriter, LLMGenerator) else None
        return [answer, rewrite]


def history_query(history: list[Turn], question: str, agent_turns: bool = False) -> str:
    """The user turns of ``history`` (and the agent's with ``agent_turns``) and ``question``, one per line."""
    said = [t.text.strip() for t in history if agent_turns or t.speaker == "user"]
    return "\n".join([*(text for text in said if text), question])


def rewrite_prompt(template: str, history: list[Turn], question: str) -> str:
    """``template`` filled with the history (``Human: ...`` / ``Assistant: ...`` lines) and the follow-up question."""
    chat_history = "\n".join(f"{_ROLES[t.speaker]}: {t.text}" for t in history)
    return template.replace("{chat_history}", chat_history).replace("{question}", question)


def conversation_messages(system_prompt: str, sample: Sample, contexts: list[str]) -> list[dict[str, str]]:
    """The naive RAG's messages with the history as the chat turns between the system prompt and the question."""
    system, last = build_messages(system_prompt, sample.question, contexts)
    turns = [{"role": _CHAT_ROLES[t.speaker], "content": t.text} for t in sample.history]
    return [system, *turns, last]


@hookimpl
def register_rags(register):
    """Register ``conversational_naive``."""
    register(ConversationalNaiveRAG)
