"""Reference agents that retrieve more than once, on the model of the boolean agents, with their trajectories.

- ``decomposing_agent`` (Self-Ask, Press et al. 2022, planned up front): one call decomposes the question into
  follow-up questions, one per hop (``#n`` where an earlier answer goes); one retrieval per follow-up question, in
  order; where a later one needs an earlier answer, a read call gives that intermediate answer from the hop's
  sources and it is filled in; then the answer from everything retrieved (the naive RAG's prompt, seeds/003).
- ``iterative_agent`` (ReAct, Yao et al. 2023): Thought / Action / Observation steps, each call choosing
  ``Search[query]`` (a retrieval, its passages the next observation) or ``Finish[answer]``; at most ``max_steps``
  searches; then the answer from everything retrieved (or, with ``answer = "finish"``, the Finish argument).

Both record their trajectory (``RAGOutput.trajectory``, :mod:`.agents_trajectory`): a ``model_call`` step per call
(prompt, reply, usage, latency), a ``retrieval`` step per retrieval (query, ranked ids, document ids, scores), the
``answer`` step last. The contexts are the union of what was retrieved, in order; usage is summed, per model too.
A reply that cannot be parsed degrades to a recorded fallback (the step's ``attributes["fallback"]`` and the
trace's ``fallbacks``): the question itself as the only sub-question, a follow-up question standing in for a
missing intermediate answer, a search with the question, or a stop. Prompts: :mod:`.agents_prompts`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragassay import Corpus, RAGOutput, RAGSystem, Sample, hookimpl
from ragassay.llm import LLMGenerator

from .agents_prompts import (
    DECOMPOSE_PROMPT,
    REACT_PROMPT,
    READ_PROMPT,
    Plan,
    fill,
    fill_answers,
    missing_placeholders,
    numbered,
    parse_action,
    parse_intermediate,
    parse_plan,
    placeholders,
    prompt_version,
)
from .agents_trajectory import TrajectoryRecorder
from .naive import DEFAULT_SYSTEM_PROMPT, NaiveRAG, build_messages, index_corpus


def _check_placeholders(value: str, *names: str) -> str:
    missing = missing_placeholders(value, *names)
    if missing:
        raise ValueError(
            f"the prompt lacks {' and '.join(missing)}: it must show {', '.join('{' + n + '}' for n in names)}"
        )
    return value


class _AgentOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(3, ge=1, le=1000, description="Chunks retrieved per retrieval (per hop or per search).")
    rag_system_prompt: str = Field(
        DEFAULT_SYSTEM_PROMPT, description="System message of the final answer call (the naive RAG's, seeds/003)."
    )


class DecomposingOptions(_AgentOptions):
    """Options of ``decomposing_agent``."""

    max_hops: int = Field(4, ge=1, le=20, description="Most follow-up questions (retrievals); more are dropped.")
    decompose_prompt: str = Field(
        DECOMPOSE_PROMPT, description="The decomposition prompt, with {question} (default: Self-Ask, planned up front)."
    )
    read_prompt: str = Field(
        READ_PROMPT,
        description="The intermediate-answer prompt, with {sources} and {sub_question} (default: Self-Ask's "
        "intermediate answer, as a short answer).",
    )

    @field_validator("decompose_prompt")
    @classmethod
    def _decompose(cls, value: str) -> str:
        return _check_placeholders(value, "question")

    @field_validator("read_prompt")
    @classmethod
    def _read(cls, value: str) -> str:
        return _check_placeholders(value, "sources", "sub_question")


class IterativeOptions(_AgentOptions):
    """Options of ``iterative_agent``."""

    max_steps: int = Field(4, ge=1, le=50, description="Most searches (retrievals) before the agent must answer.")
    react_prompt: str = Field(
        REACT_PROMPT,
        description="The ReAct prompt, with {question} and {scratchpad} (the Thought/Action/Observation lines so "
        "far); default: ReAct's instruction with Search[query] and Finish[answer].",
    )
    answer: Literal["sources", "finish"] = Field(
        "sources",
        description="'sources': a final call answers from everything retrieved with the naive RAG's prompt (cited "
        "[n], comparable with naive); 'finish': the Finish[answer] argument is the answer (ReAct's own; no extra "
        "call unless the agent stopped without one).",
    )

    @field_validator("react_prompt")
    @classmethod
    def _react(cls, value: str) -> str:
        return _check_placeholders(value, "question", "scratchpad")


class _Agent(RAGSystem):
    """Shared parts: indexing, the recorder, the final answer from everything retrieved."""

    retrieval = "decides"
    roles = NaiveRAG.roles

    def prepare(self, corpus: Corpus) -> None:
        self.parts["generator"].require_chat(f"rag '{self.name}' (the model plans its retrievals)")
        index_corpus(corpus, self.parts["chunker"], self.parts["retriever"])

    def recorder(self) -> TrajectoryRecorder:
        return TrajectoryRecorder(self.parts["generator"], self.parts["retriever"])

    async def answer_from_sources(self, sample: Sample, recorder: TrajectoryRecorder) -> str:
        """The answer call: the naive RAG's messages with every retrieved chunk as a numbered source."""
        texts = [h.chunk.text for h in recorder.union]
        messages = build_messages(self.options.rag_system_prompt, sample.question, texts)
        text, _ = await recorder.call("answer", messages, sources=len(texts))
        return text

    def answer_chars(self, sample: Sample, hints: Any, sources: int) -> tuple[int, list[dict[str, str]]]:
        """Characters and messages of the answer call with ``sources`` top-k retrievals as ``hints`` assumes."""
        per = (hints.context_chars or 0) // self.options.top_k
        contexts = ["x" * per] * (self.options.top_k * sources)
        messages = build_messages(self.options.rag_system_prompt, sample.question, contexts)
        return sum(len(m["content"]) for m in messages), messages


class DecomposingAgentRAG(_Agent):
    """Decompose the question into follow-up questions (Self-Ask), retrieve once per hop, answer from all."""

    name = "decomposing_agent"
    retrieval = "always"  # at least one retrieval: the question itself when it needs no follow-up
    Options = DecomposingOptions

    async def answer(self, sample: Sample) -> RAGOutput:
        recorder = self.recorder()
        plan = await self._plan(sample, recorder)
        answers: dict[int, str] = {}
        queries: list[str] = []
        for hop, sub_question in enumerate(plan.sub_questions, start=1):
            query = fill_answers(sub_question, answers)
            queries.append(query)
            hits = await recorder.retrieve(query, self.options.top_k, hop=hop, sub_question=sub_question)
            later = plan.sub_questions[hop:]
            if any(hop in placeholders(q) for q in later):
                answers[hop] = await self._read(query, sub_question, [h.chunk.text for h in hits], recorder)
        answer = await self.answer_from_sources(sample, recorder)
        trace = {
            "agent": "decomposing",
            "prompts": {
                "decompose": prompt_version(self.options.decompose_prompt),
                "read": prompt_version(self.options.read_prompt),
            },
            "decision": plan.decision,
            "sub_questions": plan.sub_questions,
            "queries": queries,
            "intermediate_answers": {str(k): v for k, v in answers.items()},
        }
        return recorder.output(answer, trace, hops=len(plan.sub_questions))

    async def _plan(self, sample: Sample, recorder: TrajectoryRecorder) -> Plan:
        prompt = fill(self.options.decompose_prompt, question=sample.question)
        reply, step = await recorder.call("decompose", [{"role": "user", "content": prompt}])
        plan = parse_plan(reply, sample.question, self.options.max_hops)
        step.attributes.update(sub_questions=plan.sub_questions, decision=plan.decision)
        if plan.dropped:
            step.attributes["dropped"] = plan.dropped
        if plan.fallback:
            recorder.fallback(step, plan.fallback)
        return plan

    async def _read(self, query: str, sub_question: str, texts: list[str], recorder: TrajectoryRecorder) -> str:
        """The intermediate answer of a hop, read from its sources; the follow-up question itself (in parentheses)
        when the reply gives none."""
        prompt = fill(self.options.read_prompt, sources=numbered(texts), sub_question=query)
        reply, step = await recorder.call("read", [{"role": "user", "content": prompt}])
        answer = parse_intermediate(reply)
        if answer is None:
            recorder.fallback(step, "no intermediate answer in the reply: the follow up question stands in for it")
            return f"({query})"
        step.attributes["intermediate_answer"] = answer
        return answer

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """2 calls (decompose, answer) for one hop; up to ``max_hops`` + 1 (a read call per hop whose answer a
        later follow-up question needs)."""
        generator = self.parts["generator"]
        if not isinstance(generator, LLMGenerator):
            return generator.call_pattern(sample, hints)
        if hints.context_chars is None:
            return None
        decompose = [{"role": "user", "content": fill(self.options.decompose_prompt, question=sample.question)}]
        answer_chars, answer = self.answer_chars(sample, hints, 1)
        high = self.options.max_hops + 1
        note = f"decompose + answer, +1 read per hop a later hop needs (up to {self.options.max_hops} hops)"
        return generator.calls(len(decompose[0]["content"]) + answer_chars, 2, high, note, messages=[decompose, answer])


class IterativeAgentRAG(_Agent):
    """Search, read, decide the next search or finish (ReAct), at most ``max_steps`` searches, then answer."""

    name = "iterative_agent"
    Options = IterativeOptions

    async def answer(self, sample: Sample) -> RAGOutput:
        recorder = self.recorder()
        scratchpad, finish, stop = "", None, "max_steps"
        for step_number in range(1, self.options.max_steps + 1):
            action = await self._act(sample, scratchpad, step_number, recorder)
            if action.kind == "finish" or action.kind is None:
                finish, stop = action.argument, action.kind or "fallback"
                break
            hits = await recorder.retrieve(action.argument, self.options.top_k, step=step_number)
            scratchpad += _step_lines(step_number, action, [h.chunk.text for h in hits])
        use_finish = self.options.answer == "finish" and stop == "finish" and bool(finish)
        answer = finish if use_finish else await self.answer_from_sources(sample, recorder)
        trace = {
            "agent": "iterative",
            "prompts": {"react": prompt_version(self.options.react_prompt)},
            "stop": stop,
            "finish": finish,
            "queries": [s.query for s in recorder.steps if s.kind == "retrieval"],
        }
        return recorder.output(answer, trace, answered_from="finish" if use_finish else "sources", stop=stop)

    async def _act(self, sample: Sample, scratchpad: str, number: int, recorder: TrajectoryRecorder):
        """One Thought/Action call; an unparseable reply searches with the question when nothing was retrieved
        yet, else stops (``kind`` None), either recorded as a fallback."""
        prompt = fill(self.options.react_prompt, question=sample.question, scratchpad=scratchpad) + f"Thought {number}:"
        params = {"stop": [f"\nObservation {number}:"]}
        reply, step = await recorder.call("act", [{"role": "user", "content": prompt}], params=params)
        action = parse_action(reply)
        if action.kind is None and recorder.retrievals() == 0:
            action.kind, action.argument = "search", sample.question
            recorder.fallback(step, "no Search[...] or Finish[...] action in the reply: searched with the question")
        elif action.kind is None:
            recorder.fallback(step, "no Search[...] or Finish[...] action in the reply: stopped searching")
        step.attributes.update(action=action.kind, argument=action.argument, thought=action.thought)
        return action

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """1 act call with Finish (``answer = "finish"``) or 2 (act, answer); up to ``max_steps`` + 1."""
        generator = self.parts["generator"]
        if not isinstance(generator, LLMGenerator):
            return generator.call_pattern(sample, hints)
        if hints.context_chars is None:
            return None
        act = fill(self.options.react_prompt, question=sample.question, scratchpad="") + "Thought 1:"
        act_messages = [{"role": "user", "content": act}]
        if self.options.answer == "finish":
            note = "1 act call when the model finishes at once; +1 act per search, +1 answer without Finish"
            return generator.calls(len(act), 1, self.options.max_steps + 1, note, messages=[act_messages])
        answer_chars, answer = self.answer_chars(sample, hints, 1)
        note = f"1 act call per search (up to {self.options.max_steps}) and the answer call"
        return generator.calls(
            len(act) + answer_chars, 2, self.options.max_steps + 1, note, messages=[act_messages, answer]
        )


def _step_lines(number: int, action: Any, texts: list[str]) -> str:
    """The scratchpad lines of one search: Thought, Action and the Observation (passages on one line, as ReAct's
    observations are)."""
    observation = " ".join(f"[{i}] {' '.join(t.split())}" for i, t in enumerate(texts, start=1)) or "No passages found."
    thought = action.thought or "I need to search."
    action_line = f"Action {number}: Search[{action.argument}]"
    return f"Thought {number}: {thought}\n{action_line}\nObservation {number}: {observation}\n"


@hookimpl
def register_rags(register):
    """Register ``decomposing_agent`` and ``iterative_agent``."""
    register(DecomposingAgentRAG)
    register(IterativeAgentRAG)
