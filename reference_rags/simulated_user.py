"""The ``simulated_user`` rag: a user who drives another system of the run through a GRAMMAR follow-up chain.

Configure it over the system it talks to::

    [systems.chat]
    rag = "conversational_naive"
    retriever = "bm25"
    generator = "extractive"

    [systems.chat_simulated]
    rag = "simulated_user"
    options = { system = "chat" }

A chain sample (``ragassay.plugins.grammar``'s follow-up chains) carries ``metadata["chain"]`` with the turn's
``question`` phrasing data: ``standalone_question``, ``refers_to`` (the text a pronoun of the turn stands for, or
null) and ``earlier`` (one ``{"question", "standalone_question", "refers_to"}`` per earlier user turn, oldest
first). For the sample of turn k the user replays the conversation from turn 1. At each turn j it asks:

- the question as written (``"dependent"``) when the turn refers to something (``refers_to``) and the system's
  previous answer names it (``refers_to`` occurs in it, case-insensitive): the pronoun is resolvable;
- the explicit form (``"explicit"``: :data:`EXPLICIT_TEMPLATE`, ``"I mean <refers_to>: <standalone question>"``)
  when the previous answer does not name it (or there is none), so the user keeps pursuing the chain's goal
  knowing the exact answers;
- the question as written (``"as written"``) when the turn refers to nothing.

The wrapped system answers every turn j with the simulated history (the user's phrasings and its own earlier
answers). The output is its answer at turn k, scored against turn k's exact gold; ``trace["simulated_user"]``
holds the simulated conversation, and ``RAGOutput.query`` the retrieval query (the wrapped system's, or the user's
phrasing when it differs from the sample's question). The earlier turns are answered again for every sample of the
conversation: their model calls are served by ragassay's response cache (the same prompt is a cache hit), and
their usage counts in the output's usage.

With ``phrasing`` (a generator) the user's templated turn is rewritten into natural text by
:data:`PHRASING_PROMPT` (seeded with ``seed``); default: no model, the templated text (deterministic).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import (
    ConfigError,
    Corpus,
    GenerationRequest,
    GeneratorRef,
    RAGOutput,
    RAGSystem,
    Sample,
    TokenUsage,
    Turn,
    hookimpl,
    turn_id,
)
from ragassay.llm import LLMGenerator

from .simulated_user_chain import ChainTurn, chain_turns, phrase

#: How the user states a turn explicitly; {refers_to}, {standalone_question} and {question} are filled in.
EXPLICIT_TEMPLATE = "I mean {refers_to}: {standalone_question}"

#: The phrasing prompt, adapted from DeepEval's user simulator (``deepeval/simulator/template.py``,
#: ``ConversationSimulatorTemplate.simulate_first_user_turn``: its role line and guidelines 2 and 4), restricted to
#: rephrasing one given message without changing what it asks.
PHRASING_PROMPT = (
    "Pretend you are a user of an LLM app. Rewrite the message below as you would type it in the conversation.\n"
    "Guidelines:\n"
    "1. Ask exactly what the message asks: keep every name, number and date, and keep a pronoun as a pronoun.\n"
    "2. Keep the tone warm, conversational, and natural, as if it's from a real person seeking assistance.\n"
    "3. The message should be concise, ideally one sentence.\n"
    "Reply with the rewritten message only.\n\n"
    "Message: {message}"
)


class SimulatedUserOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    system: str = Field(description="The system of the run that the simulated user talks to.")
    explicit_template: str = Field(
        EXPLICIT_TEMPLATE,
        description="How the user states a turn whose referent the system's previous answer did not name: "
        "{refers_to}, {standalone_question} and {question} are filled in.",
    )
    phrasing: GeneratorRef | None = Field(
        None,
        description="A language model that rewrites the user's templated turn into natural text (PHRASING_PROMPT); "
        "none (default): the templated text, no model.",
    )
    seed: int = Field(0, description="Seed of the phrasing model's sampling (sent as the call's seed).")

    @field_validator("explicit_template")
    @classmethod
    def _names_the_question(cls, value: str) -> str:
        if "{standalone_question}" not in value:
            raise ValueError("explicit_template must contain {standalone_question}: the explicit turn states it")
        return value


class SimulatedUserRAG(RAGSystem):
    """A simulated user that replays a GRAMMAR chain with another system, asking each turn from its answers."""

    name = "simulated_user"
    wraps = "system"
    Options = SimulatedUserOptions

    @classmethod
    def check_wrapped(cls, wrapped: type[RAGSystem], options: BaseModel) -> None:
        if not wrapped.answers:
            raise ConfigError(
                f"the simulated user talks to system '{options.system}', whose rag '{wrapped.name}' gives no answer "
                "(retrieval-only): the user asks each turn from the system's answers. Wrap a system that answers"
            )

    def prepare(self, corpus: Corpus) -> None:
        self.prepare_wrapped(corpus)
        self.phrasing = None
        if self.options.phrasing is not None:
            self.phrasing = self.context.build(self.options.phrasing)
            if not self.phrasing.supports_chat:
                raise ConfigError(
                    f"rag 'simulated_user': the phrasing generator '{self.options.phrasing.name}' is not a language "
                    "model; set options.phrasing to an LLM generator (openai, anthropic, local) or leave it unset"
                )

    def check_samples(self, samples: Iterable[Sample]) -> list[str]:
        """A warning naming the samples without ``metadata["chain"]`` (their units fail)."""
        missing = [s.question_id for s in samples if not isinstance((s.metadata or {}).get("chain"), dict)]
        if not missing:
            return []
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        return [
            f"simulated_user (talking to system '{self.options.system}'): {len(missing)} sample(s) have no "
            f"metadata['chain'] ({shown}); their units fail. Run it on GRAMMAR follow-up chain samples"
        ]

    async def answer(self, sample: Sample) -> RAGOutput:
        turns = chain_turns(sample)
        cid = sample.conversation_id or sample.question_id
        history: list[Turn] = []
        conversation: list[dict[str, Any]] = []
        usage, answer, output = TokenUsage(), None, None
        for number, turn in enumerate(turns, start=1):
            asked, how = phrase(turn, answer, self.options.explicit_template)
            asked, phrased, phrasing_usage = await self._natural(asked)
            usage = usage + phrasing_usage
            output = await self._ask(sample, cid, number, len(turns), asked, history)
            usage = usage + output.usage
            answer = output.answer
            conversation.append(_record(number, turn, asked, how, phrased, output))
            history = [*history, Turn(speaker="user", text=asked), Turn(speaker="agent", text=answer)]
        output.usage = usage
        if output.query is None and asked != sample.question:
            output.query = asked
        output.trace["simulated_user"] = {"system": self.options.system, "question": asked, "turns": conversation}
        return output

    async def _ask(
        self, sample: Sample, cid: str, number: int, last: int, asked: str, history: list[Turn]
    ) -> RAGOutput:
        """The wrapped system's answer to turn ``number`` (the sample itself at the last turn)."""
        if number == last:
            update = {"question": asked, "history": history, "conversation_id": cid, "turn": number}
            posed = sample.model_copy(update=update)
        else:
            posed = Sample(
                question_id=turn_id(cid, number), question=asked, conversation_id=cid, turn=number, history=history
            )
        try:
            return await self.wrapped_system().answer(posed)
        except Exception as exc:
            if number == last:
                raise
            raise RuntimeError(
                f"simulated conversation {cid!r}: system '{self.options.system}' failed at earlier turn {number}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    async def _natural(self, text: str) -> tuple[str, dict[str, Any] | None, TokenUsage]:
        """``text`` rewritten by the phrasing model (the record of the rewrite and its usage), or as it is."""
        if self.phrasing is None:
            return text, None, TokenUsage()
        prompt = PHRASING_PROMPT.replace("{message}", text)
        request = GenerationRequest(
            question=text, messages=[{"role": "user", "content": prompt}], params={"seed": self.options.seed}
        )
        generation = await self.phrasing.generate(request)
        reply = generation.text.strip()
        record: dict[str, Any] = {"templated": text, "reply": generation.text, "generator": generation.raw}
        if not reply:
            record["fallback"] = "the phrasing model replied with nothing: the templated text was asked"
            return text, record, generation.usage
        return reply, record, generation.usage

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """The wrapped system's calls for the sample's own turn, and one phrasing call with a phrasing model. The
        earlier turns it replays are the conversation's other samples: the response cache serves them."""
        inner = self.wrapped_system().call_pattern(sample, hints)
        if self.options.phrasing is None:
            return inner
        phrasing = self.context.build(self.options.phrasing)
        if not isinstance(phrasing, LLMGenerator):
            return inner
        prompt = len(PHRASING_PROMPT) + len(sample.question)
        return [*(inner if isinstance(inner, list) else [inner]), phrasing.calls(prompt, note="phrasing")]

    async def aclose(self) -> None:
        """Close the shared wrapped system once (by the first of its wrappers closed)."""
        await self.close_wrapped()


def _record(number: int, turn: ChainTurn, asked: str, how: str, phrased: Any, output: RAGOutput) -> dict[str, Any]:
    """One turn of the simulated conversation as the trace keeps it."""
    record = {
        "turn": number,
        "user": asked,
        "phrasing": how,
        "refers_to": turn.refers_to,
        "agent": output.answer,
        "query": output.query,
        "context_document_ids": list(output.context_document_ids),
    }
    if phrased is not None:
        record["phrased"] = phrased
    return record


@hookimpl
def register_rags(register):
    """Register ``simulated_user``."""
    register(SimulatedUserRAG)
