"""The data contract shared by every component: documents, samples, outputs, judgements, metric values.

All models are pydantic v2 models. Field names of :class:`Sample` and :class:`RAGOutput` follow the Unitxt
RAG task (``../shared/seeds/004``: question, question_id, metadata, reference_answers, reference_contexts,
reference_context_ids, is_answerable; contexts, context_ids, answer). :data:`INPUTS` names the parts of them a metric
or judge can require (``Metric.requires``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Document(BaseModel):
    """One source document of a corpus."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Unique, stable id of the document (used by reference_context_ids).")
    text: str = Field(description="The full text of the document.")
    title: str = Field(default="", description="Human-readable title; chunkers may prefix it to chunks.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Free metadata (date, url, source path, ...).")


class Chunk(BaseModel):
    """A retrievable piece of a document."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Unique id of the chunk, '<document id>#<index>' for chunked documents.")
    document_id: str = Field(description="Id of the document the chunk comes from.")
    text: str = Field(description="The chunk text as given to retrievers and generators.")
    index: int = Field(default=0, description="Position of the chunk within its document, from 0.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Inherited document metadata and offsets.")


class ScoredChunk(BaseModel):
    """A chunk returned by a retriever, with its score (higher is better) and 1-based rank."""

    model_config = ConfigDict(extra="forbid")

    chunk: Chunk = Field(description="The retrieved chunk.")
    score: float = Field(description="Retriever score; only its order within one result list is meaningful.")
    rank: int = Field(description="1-based rank within the result list.")


#: The answerability labels of a conversation turn (MTRAG's enrichments; docs/conversations.md).
ANSWERABILITY = ("answerable", "unanswerable", "underspecified", "partial")


class Turn(BaseModel):
    """One utterance of a conversation: who spoke, and what they said."""

    model_config = ConfigDict(extra="forbid")

    speaker: Literal["user", "agent"] = Field(description="'user' (the person) or 'agent' (the RAG system).")
    text: str = Field(description="What was said.")


class Hop(BaseModel):
    """One hop of a multi-hop question: what it looks up and the gold documents of the rows it touches."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1, description="1-based position of the hop along the question's path.")
    description: str = Field(default="", description="What the hop looks up, e.g. 'Project -> Client'.")
    reference_context_ids: list[str] = Field(
        default_factory=list, description="Ids of the gold documents (or chunks) of the rows this hop touches."
    )
    question: str | None = Field(default=None, description="The hop's own sub-question, where known.")


class ToolCall(BaseModel):
    """A tool call as expected (``Sample.expected_tool_calls``): the tool's name and its arguments."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The tool's name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The arguments, by name.")


class Sample(BaseModel):
    """One evaluation item: a question with its references (the Unitxt RAG task fields).

    A turn of a conversation is a sample too: ``conversation_id`` names the conversation, ``turn`` its 1-based
    position among the user's turns, ``history`` the turns before it (the question is the turn's own text), and
    ``question_id`` is ``conversation_id::turn`` (:func:`turn_id`). Every metric reads a turn as a single question;
    the conversational ones also read its history, and the statistics resample whole conversations
    (``conversation_id`` is the cluster).

    Extra keys are allowed and kept: they are the free attributes (query length class, template id, ...)
    that hypotheses and reports group by.
    """

    model_config = ConfigDict(extra="allow")

    question_id: str = Field(description="Unique id of the question within its dataset.")
    question: str = Field(description="The user's question.")
    metadata: dict[str, Any] = Field(default_factory=dict, description="Optional metadata, e.g. a question category.")
    reference_answers: list[str] = Field(default_factory=list, description="Ground-truth answers.")
    reference_contexts: list[str] = Field(default_factory=list, description="Ground-truth context texts.")
    reference_context_ids: list[str] = Field(
        default_factory=list, description="Ids of the ground-truth documents or chunks."
    )
    is_answerable: bool = Field(default=True, description="Whether the question can be answered from the corpus.")
    group_id: str | None = Field(default=None, description="Semantic group (same query logic), e.g. GRAMMAR groups.")
    conversation_id: str | None = Field(
        default=None, description="The conversation this turn belongs to (None: a single question)."
    )
    turn: int | None = Field(
        default=None, ge=1, description="1-based position of this turn among the conversation's user turns."
    )
    history: list[Turn] = Field(
        default_factory=list, description="The conversation before this turn, oldest first (user and agent turns)."
    )
    answerability: Literal["answerable", "unanswerable", "underspecified", "partial"] | None = Field(
        default=None,
        description="Whether the turn can be answered: answerable, unanswerable, underspecified (needs "
        "clarification) or partial (partially answerable); None when unknown.",
    )

    hops: list[Hop] = Field(
        default_factory=list, description="Per-hop gold of a multi-hop question, in path order (empty: one hop)."
    )
    expected_tool_calls: list[ToolCall] = Field(
        default_factory=list, description="The tool calls a right trajectory makes, in order (trajectory metrics)."
    )

    @model_validator(mode="after")
    def _conversation(self) -> Sample:
        """A turn names its conversation and its position together."""
        if (self.conversation_id is None) != (self.turn is None):
            raise ValueError("conversation_id and turn go together: give both for a conversation turn, or neither")
        if self.history and self.conversation_id is None:
            raise ValueError("history is given but conversation_id is not: a turn with history names its conversation")
        return self

    @property
    def cluster(self) -> str:
        """The unit the statistics resample: the conversation of a turn, else the sample itself."""
        return self.conversation_id if self.conversation_id is not None else self.question_id

    @property
    def attributes(self) -> dict[str, Any]:
        """The free attributes: every extra key given beyond the declared fields."""
        return dict(self.__pydantic_extra__ or {})


def turn_id(conversation_id: str, turn: int) -> str:
    """The stable sample id of a conversation's turn: ``conversation_id::turn`` (MTRAG's ``task_id``)."""
    return f"{conversation_id}::{turn}"


class TokenUsage(BaseModel):
    """Token counts of one or more model calls.

    ``input_tokens`` includes ``cached_tokens`` (the part of the prompt the provider served from its prompt
    cache, billed at the cached price); ``output_tokens`` includes ``reasoning_tokens`` (a reasoning model's
    thinking, priced apart where the price table says so). A response served from ragassay's response cache keeps
    the token counts of the call that produced it, with ``calls == 0`` and ``cache_hits == 1``. ``by_model`` breaks the
    totals down per ``backend/model`` so cost can be priced per model (its entries have no ``by_model``).
    """

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(default=0, description="Prompt tokens sent (including cached_tokens).")
    output_tokens: int = Field(default=0, description="Completion tokens received.")
    cached_tokens: int = Field(default=0, description="Input tokens served from the provider's prompt cache.")
    reasoning_tokens: int = Field(
        default=0,
        description="Output tokens the model spent reasoning or thinking (included in output_tokens; priced apart).",
    )
    calls: int = Field(default=0, description="Number of model calls made.")
    cache_hits: int = Field(default=0, description="Responses served from ragassay's response cache (no call).")
    by_model: dict[str, TokenUsage] = Field(
        default_factory=dict, description="The same counts per 'backend/model' (for pricing)."
    )

    def __add__(self, other: TokenUsage) -> TokenUsage:
        by_model = dict(self.by_model)
        for model, usage in other.by_model.items():
            by_model[model] = by_model[model] + usage if model in by_model else usage
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            calls=self.calls + other.calls,
            cache_hits=self.cache_hits + other.cache_hits,
            by_model=by_model,
        )


StepKind = Literal["model_call", "retrieval", "tool_call", "answer", "agent"]


class Step(BaseModel):
    """One step of an agent's trajectory: a model call, a retrieval, a tool call, the final answer, or a nested
    agent (whose own steps name it as ``parent_id``). Fields that do not apply to the kind stay empty."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Unique id of the step within its trajectory (a span id, or 's1', 's2', ...).")
    kind: StepKind = Field(description="model_call, retrieval, tool_call, answer or agent (a nested agent).")
    parent_id: str | None = Field(default=None, description="The agent step this step belongs to (None: top level).")
    name: str = Field(default="", description="The tool's, model's or agent's name.")
    query: str | None = Field(default=None, description="retrieval: the query sent.")
    context_ids: list[str] = Field(default_factory=list, description="retrieval: the ids retrieved, in rank order.")
    document_ids: list[str] = Field(
        default_factory=list, description="retrieval: the document of each retrieved id (same order)."
    )
    scores: list[float] = Field(default_factory=list, description="retrieval: the score of each retrieved id.")
    arguments: dict[str, Any] | None = Field(default=None, description="tool_call: the arguments, by name.")
    call_id: str | None = Field(default=None, description="tool_call: the provider's tool call id.")
    result: Any = Field(default=None, description="tool_call: what the tool returned (JSON).")
    error: str | None = Field(default=None, description="The error the step ended with (a tool's, a model's).")
    input: str | None = Field(default=None, description="model_call: the prompt (or its last message).")
    output: str | None = Field(default=None, description="model_call, answer: the text produced.")
    usage: TokenUsage | None = Field(default=None, description="model_call: its tokens (None: not a model call).")
    latency_s: float | None = Field(default=None, description="Wall time of the step, when known.")
    started_at: float | None = Field(default=None, description="Start time, seconds since the Unix epoch, when known.")
    attributes: dict[str, Any] = Field(default_factory=dict, description="Anything else the source recorded.")


class RAGOutput(BaseModel):
    """What a RAG system produced for one sample."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(description="The generated answer.")
    contexts: list[str] = Field(default_factory=list, description="Texts of the retrieved contexts, in rank order.")
    context_ids: list[str] = Field(default_factory=list, description="Ids of the retrieved contexts, in rank order.")
    context_document_ids: list[str] = Field(
        default_factory=list, description="Document id of each retrieved context (same order as context_ids)."
    )
    retrieved: bool | None = Field(
        default=None, description="Retrieval decision: True if retrieval ran, False if skipped, None if n/a."
    )
    query: str | None = Field(
        default=None,
        description="The retrieval query the system sent when it is not the question itself (a conversational "
        "system's rewrite of the turn, or the history it searched with); None: the question.",
    )
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens used for this sample, summed.")
    latency_s: float | None = Field(
        default=None, description="Wall time of the system for this sample (set by the runner)."
    )
    trace: dict[str, Any] = Field(default_factory=dict, description="Raw trace: prompts, tool calls, timings.")
    trajectory: list[Step] = Field(
        default_factory=list, description="An agent's steps in order (model calls, retrievals, tool calls, answer)."
    )

    @model_validator(mode="after")
    def _aligned(self) -> RAGOutput:
        """contexts, context_ids and context_document_ids describe the same list, when given."""
        lengths = {name: len(getattr(self, name)) for name in ("contexts", "context_ids", "context_document_ids")}
        given = {n: length for n, length in lengths.items() if length}
        if len(set(given.values())) > 1:
            raise ValueError(
                f"contexts, context_ids and context_document_ids must have the same length when given; got {given}"
            )
        return self


class Unscored(BaseModel):
    """An explicit 'no value' for a metric, with the reason (never NaN)."""

    model_config = ConfigDict(extra="forbid")

    reason: str = Field(description="Why the metric could not be computed for this output.")
    details: dict[str, Any] = Field(
        default_factory=dict, description="What was seen on the way (e.g. a judge's raw, unparseable reply)."
    )


class MetricResult(BaseModel):
    """A metric's value for one output with its breakdown: per-segment verdicts, per-claim verdicts,
    per-context scores, ... ``details`` must be JSON-serialisable; it is stored (standard JSON, keys sorted: a
    NaN or infinity in it is stored as null) and shown by ``ragassay show``.

    A metric may return a plain float when it has no details to give.
    """

    model_config = ConfigDict(extra="forbid")

    value: float = Field(description="The score (finite, within the metric's declared value_range).")
    details: dict[str, Any] = Field(default_factory=dict, description="Metric-specific breakdown (JSON).")


class ScoringUnit:
    """One output of one sample as a run scores it: its metrics score it one after another, and what several of
    them derive alike from the pair (the per-hop matching of the hop metrics, the tool calls compared by the
    trajectory metrics) is computed once, by the first that asks :meth:`shared`.

    A metric that derives such a value defines ``score_unit(unit) -> float | MetricResult | Unscored``, which a
    run calls in place of ``ascore`` (docs/plugins.md, Declared capabilities); its ``score(sample, output)``
    returns ``self.score_unit(ScoringUnit(sample, output))``, a unit of its own. A unit lives for one scoring of
    one output and is never reused for another: a shared value depends on the sample, the output and its key
    only (options that change it belong in the key), and is read only.
    """

    __slots__ = ("sample", "output", "_shared")

    def __init__(self, sample: Sample, output: RAGOutput) -> None:
        self.sample = sample
        self.output = output
        self._shared: dict[Any, Any] = {}

    def shared(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, called once per ``key`` in this unit (name the key after its module: ``("hops",
        "matches", k)``); the value is shared by every metric of the unit that asks with the same key."""
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]


class MetricValue(BaseModel):
    """The value of one metric for one output: a number, or unscored with a reason."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="Registered metric name.")
    value: float | None = Field(description="The score; None exactly when unscored.")
    unscored_reason: str | None = Field(default=None, description="Why there is no value.")
    details: dict[str, Any] = Field(default_factory=dict, description="Metric-specific breakdown.")
    usage: TokenUsage | None = Field(
        default=None, description="Model calls the metric made (evaluation cost); None when it made none."
    )
    repeat: int = Field(default=0, ge=0, description="Which repeat of `ragassay run --repeat N` (0: the first).")


class Judgement(BaseModel):
    """A judge's verdict on one output."""

    model_config = ConfigDict(extra="forbid")

    judge: str = Field(description="Registered judge name.")
    verdict: str = Field(description="Label, e.g. 'correct' / 'incorrect' (or 'unscored').")
    score: float | None = Field(description="Numeric score in [0, 1]; None when the judge could not decide.")
    explanation: str = Field(default="", description="The judge's reasoning or the reason it could not decide.")
    judge_id: str = Field(default="", description="Identity of the judge configuration (model, prompt version).")
    details: dict[str, Any] = Field(default_factory=dict, description="Judge-specific breakdown (raw reply, ...).")
    usage: TokenUsage | None = Field(
        default=None, description="Model calls the judge made (evaluation cost); None when it made none."
    )
    repeat: int = Field(default=0, ge=0, description="Which repeat of `ragassay run --repeat N` (0: the first).")


class ComponentSpec(BaseModel):
    """How one component was configured: enough to re-create it."""

    model_config = ConfigDict(extra="forbid")

    kind: str = Field(description="Component kind: retriever, generator, chunker, rag, metric, judge, ...")
    name: str = Field(description="Registered name ('plugin/name' for third-party components).")
    plugin: str = Field(default="", description="Plugin (entry point) that registered it.")
    distribution: str = Field(default="", description="Distribution that ships the plugin.")
    version: str = Field(default="", description="Version of that distribution.")
    options: dict[str, Any] = Field(default_factory=dict, description="Validated options, defaults filled in.")
    components: dict[str, ComponentSpec] = Field(
        default_factory=dict,
        description="Nested components named in the options, by option path (e.g. 'retrievers[0]', 'embedder').",
    )
    traits: dict[str, Any] = Field(
        default_factory=dict, description="Declared properties that readers need (a metric's direction and range)."
    )


class SystemSpec(BaseModel):
    """The resolved description of one system under evaluation."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="System name from the config.")
    rag: ComponentSpec = Field(description="The RAG system component.")
    parts: dict[str, ComponentSpec] = Field(default_factory=dict, description="Its parts by role (retriever, ...).")


Status = Literal["ok", "failed"]


# -- what a component's model calls will be (ragassay estimate, docs/llm.md) ------------------------------------

#: :attr:`CallPattern.tokenizer` of prompt tokens estimated as characters / 4.
CHARS_RULE = "chars/4"


@dataclasses.dataclass
class CallPattern:
    """The model calls a component makes for one sample (what :meth:`Component.call_pattern` returns).

    ``calls_high`` None: no upper bound is known. ``prompt_chars``: characters sent over all the sample's calls
    (at ``calls_low`` calls). ``output_tokens``: most output tokens per call (None: not bounded by an option).
    ``model``: the ``backend/model`` key the calls go to (for the price). ``reasoning_tokens``: the reasoning
    (thinking) tokens assumed per call beyond ``output_tokens`` (a reasoning option's assumption, see
    :meth:`ragassay.llm.LLMGenerator.assumed_reasoning_tokens`; 0: none)."""

    calls_low: int
    calls_high: int | None
    prompt_chars: int
    output_tokens: int | None
    model: str | None
    note: str = ""
    shared: str | None = None  # calls identical to those of any component with the same key (the cache serves them)
    prompt_tokens: int | None = None  # the prompts' tokens by the model's tokenizer (None: characters / 4)
    tokenizer: str = CHARS_RULE  # how prompt tokens are counted
    reasoning_tokens: int = 0  # assumed reasoning tokens per call, beyond output_tokens


@dataclasses.dataclass
class Hints:
    """What an estimate assumes of a sample's run-time inputs (see the module docstring)."""

    answer_chars: int
    context_chars: int | None  # all retrieved contexts together; None: unknown
    contexts: int | None = None  # how many retrieved contexts (top_k); None: unknown


# -- the inputs a metric or judge can require (Metric.requires, Judge.requires; docs/metrics.md) -----------------
#
# Each name is a part of the data model that a component reads to give a value: the sample's inputs, known before any
# call (``ragassay run``, :func:`ragassay.run`, ``gate`` and ``estimate`` count them while the dataset is read and
# refuse a listed metric or judge that no sample can feed: :mod:`ragassay.engine.requirements`); the output's inputs,
# known only once a system has answered (declared for the reader, not checked before the run); the values of other
# metrics of the same output (a derived metric). A component that declares nothing (the default, an empty set) is not
# checked. Declare what the value cannot do without (it is unscored, or means nothing, without it); an input read
# only when it is there (extra details) is not a requirement.

InputSide = Literal["sample", "output", "metrics"]


def _text(values: Iterable[Any]) -> bool:
    """Whether some value is a non-blank string."""
    return any(isinstance(v, str) and v.strip() for v in values)


def _qrels(sample: Sample) -> bool:
    return _text(sample.reference_context_ids) or bool((sample.metadata or {}).get("relevance"))


@dataclasses.dataclass(frozen=True)
class RequiredInput:
    """One name of the vocabulary: where it lives, what it is, and (for a sample's input) when a sample has it."""

    name: str
    side: InputSide
    description: str
    #: For an input of the sample that can be missing: whether ``sample`` has it. None: not checked before the run
    #: (an output's input, another metric's value, or a field every sample has).
    present: Callable[[Sample], bool] | None = None


INPUTS: dict[str, RequiredInput] = {
    i.name: i
    for i in (
        RequiredInput("question", "sample", "Sample.question: the user's question (every sample has one)."),
        RequiredInput(
            "reference_answers",
            "sample",
            "Sample.reference_answers: the ground-truth answers (a sample has them when one is not blank).",
            lambda s: _text(s.reference_answers),
        ),
        RequiredInput(
            "reference_contexts",
            "sample",
            "Sample.reference_contexts: the gold context texts (e.g. the article a truthfulness evaluator reads).",
            lambda s: _text(s.reference_contexts),
        ),
        RequiredInput(
            "reference_context_ids",
            "sample",
            "Sample.reference_context_ids: ids of the gold documents or chunks (the retrieval metrics' relevant ids).",
            lambda s: _text(s.reference_context_ids),
        ),
        RequiredInput(
            "qrels",
            "sample",
            "Relevance judgements of ids: Sample.reference_context_ids, or graded ones in metadata['relevance'] "
            "(the IR metrics read either).",
            _qrels,
        ),
        RequiredInput(
            "group_id",
            "sample",
            "Sample.group_id: the semantic group (same query logic) of GRAMMAR-style datasets.",
            lambda s: isinstance(s.group_id, str) and bool(s.group_id.strip()),
        ),
        RequiredInput(
            "conversation_id",
            "sample",
            "Sample.conversation_id and Sample.turn: the conversation a turn belongs to (conversation metrics).",
            lambda s: s.conversation_id is not None,
        ),
        RequiredInput(
            "history",
            "sample",
            "Sample.history: the conversation before the turn (a sample has it when it is a turn after the first).",
            lambda s: bool(s.history),
        ),
        RequiredInput(
            "answerability",
            "sample",
            "Sample.answerability: whether the turn is answerable, unanswerable, underspecified or partial.",
            lambda s: s.answerability is not None,
        ),
        RequiredInput(
            "hops",
            "sample",
            "Sample.hops: the per-hop gold of a multi-hop question (per-hop retrieval metrics, step blame).",
            lambda s: bool(s.hops),
        ),
        RequiredInput(
            "expected_tool_calls",
            "sample",
            "Sample.expected_tool_calls: the tool calls a right trajectory makes (tool and trajectory metrics).",
            lambda s: bool(s.expected_tool_calls),
        ),
        RequiredInput("answer", "output", "RAGOutput.answer: the generated answer."),
        RequiredInput(
            "contexts", "output", "RAGOutput.contexts: the texts of the retrieved contexts (and RAGOutput.retrieved)."
        ),
        RequiredInput(
            "context_ids", "output", "RAGOutput.context_ids: the ids of the retrieved contexts, in rank order."
        ),
        RequiredInput(
            "context_document_ids", "output", "RAGOutput.context_document_ids: the document of each context."
        ),
        RequiredInput("trajectory", "output", "RAGOutput.trajectory: an agent's steps (model calls, retrievals, ...)."),
        RequiredInput("query", "output", "RAGOutput.query: the retrieval query a system sent (a turn's rewrite)."),
        RequiredInput(
            "trace", "output", "RAGOutput.trace: what the system recorded (e.g. a perturbation, checks replayed)."
        ),
        RequiredInput("metric_values", "metrics", "The values of other metrics of the same output (a derived metric)."),
    )
}


def unknown_inputs(names: Iterable[str]) -> list[str]:
    """The names that are not in :data:`INPUTS`, sorted."""
    return sorted(name for name in names if name not in INPUTS)


def checked_inputs(names: Iterable[str]) -> list[str]:
    """The names among ``names`` that a sample may lack, so the dataset is checked for them (in vocabulary order)."""
    wanted = set(names)
    return [name for name, i in INPUTS.items() if name in wanted and i.present is not None]


#: The columns of the stored records, in the order a results store returns them and the read model takes them
#: (:class:`ragassay.store.protocols.ResultsReader`): outputs, their usage, metric values and judgements.
OUTPUT_COLUMNS = (
    "system",
    "question_id",
    "status",
    "error",
    "latency_s",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "calls",
    "cache_hits",
    "cost_usd",
    "unpriced",
    "retrieved",
    "retrieved_count",
    "reused_from",
)
USAGE_COLUMNS = (
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "calls",
    "cache_hits",
    "cost_usd",
    "unpriced",
    "reasoning_tokens",  # last: a reader of an older store's seven columns reads 0
)
METRIC_COLUMNS = (
    "system",
    "question_id",
    "metric",
    "repeat",
    "value",
    "unscored_reason",
    "details_json",
    *USAGE_COLUMNS,
)
JUDGEMENT_COLUMNS = (
    "system",
    "question_id",
    "judge",
    "repeat",
    "score",
    "verdict",
    "explanation",
    "judge_id",
    "details_json",
    *USAGE_COLUMNS,
)
