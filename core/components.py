"""Base classes that plugin components subclass.

A component is a class with a registered ``name``, an ``Options`` pydantic model (``extra="forbid"``,
every field described) and the method(s) of its kind. ragassay creates one instance per configured use::

    class MyRetriever(Retriever):
        '''Returns the chunks whose text is shortest (a toy).'''

        name = "shortest"

        class Options(BaseModel):
            model_config = ConfigDict(extra="forbid")
            min_chars: int = Field(0, description="Ignore chunks shorter than this.")

        def index(self, chunks):
            self.chunks = [c for c in chunks if len(c.text) >= self.options.min_chars]

        def retrieve(self, query, k):
            best = sorted(self.chunks, key=lambda c: len(c.text))[:k]
            return [ScoredChunk(chunk=c, score=-len(c.text), rank=i + 1) for i, c in enumerate(best)]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import ConfigError
from .models import Chunk, Document, Judgement, MetricResult, RAGOutput, Sample, ScoredChunk, TokenUsage, Unscored
from .phases import PhaseProgress, RunRuntime, reported_index


class NoOptions(BaseModel):
    """Options model of a component that takes no options."""

    model_config = ConfigDict(extra="forbid")


@dataclasses.dataclass(frozen=True)
class ComponentContext:
    """Where a component runs: the project folder (relative paths resolve here), a cache folder, run-wide
    settings, and the registry, so that a component can build the components it is made of (a hybrid
    retriever its retrievers, a dense retriever its embedder) with :meth:`build`."""

    project_dir: Path = dataclasses.field(default_factory=Path.cwd)
    cache_dir: Path = dataclasses.field(default_factory=lambda: Path.cwd() / ".ragassay-cache")
    registry: Any = None
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    warnings: list[str] = dataclasses.field(default_factory=list)
    #: Observers and shared objects of this run, in this process (see :mod:`ragassay.phases`).
    runtime: RunRuntime = dataclasses.field(default_factory=RunRuntime, init=False, repr=False, compare=False)

    def warn(self, message: str) -> None:
        """Report something suspicious that is not an error (a pattern matching no file, ids skipped, most of
        the corpus truncated by an embedder, ...).

        ``ragassay run`` prints it when it is reported (at the default verbosity) and again in its summary, and
        stores it with the run (``runs.warnings_json``); the same message is kept once.
        """
        if message not in self.warnings:
            self.warnings.append(message)
            self.runtime.emit_warning(message)

    def progress(self, phase: str, done: int, total: int | None = None, unit: str = "items", note: str = "") -> None:
        """Report how far a long phase of building a system is: ``done`` of ``total`` ``unit``.

        Call it when the phase starts (``done = 0``), as it goes (every batch, or every few hundred items: it
        is cheap) and when it ends (``done == total``). ``phase`` names the work ("corpus embedding"), ``unit``
        what is counted ("chunks"), ``note`` anything worth showing with it ("cache hit"). ``ragassay run``
        shows the phase with its rate and time left; a phase reported as ended at once with a note (a cache
        hit) is shown as one line. Indexing by a retriever is reported for it (``index (<name>)``) and
        chunking by :class:`Corpus`.
        """
        self.runtime.emit_progress(PhaseProgress(phase, done, total, unit, note))

    def observe(
        self,
        on_progress: Callable[[PhaseProgress], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        """Receive this run's progress reports and new warnings (``ragassay run`` and :func:`ragassay.run` do)."""
        if on_progress is not None:
            self.runtime.progress_observers.append(on_progress)
        if on_warning is not None:
            self.runtime.warning_observers.append(on_warning)

    def shared(self, key: Hashable, factory: Callable[[], Any]) -> Any:
        """An object shared by the components of this run in this process: ``factory()`` made once per ``key``.

        The dense retriever keeps its query encoder here (keyed by the embedder's identity), so that two
        systems embedding the same questions with the same embedder embed each once.
        """
        return self.runtime.shared(key, factory)

    def resolve(self, path: str | Path) -> Path:
        """Resolve ``path`` against the project folder (absolute paths are kept)."""
        path = Path(path).expanduser()
        return path if path.is_absolute() else self.project_dir / path

    def build(self, ref: Any, name_or_ref: Any = None) -> Component:
        """Instantiate a nested component from its reference.

        ``build(self.options.embedder)`` takes a kind-specific reference (:class:`ragassay.EmbedderRef`, ...);
        ``build("embedder", "local")`` or ``build("embedder", {"name": ..., "options": {...}})`` names the kind.
        Raises :class:`ragassay.ComponentNotFoundError` (with close matches) or a pydantic ValidationError
        for bad options (a run resolves references when it is planned, so these surface before any work).
        """
        from .refs import ComponentRef

        kind, ref = (ref.kind, ref) if name_or_ref is None else (ref, name_or_ref)
        if not isinstance(ref, ComponentRef):
            ref = ComponentRef.model_validate(ref)
        if not kind:
            raise TypeError("build() needs a kind: pass a kind-specific reference (EmbedderRef, ...) or the kind")
        if self.registry is None:
            from .errors import PluginError

            raise PluginError(
                f"cannot build the {kind} '{ref.name}': this ComponentContext has no plugin registry. Create it "
                "with ragassay.testing.throwaway_context(), or pass registry=ragassay.load_plugins().registry"
            )
        info = self.registry.get(kind, ref.name)
        return info.cls(info.cls.Options.model_validate(ref.options), context=self)


class Component:
    """Base of every component kind.

    Subclasses set ``name`` (and optionally ``Options``); the first docstring line is the description
    shown by ``ragassay plugins``. ``self.options`` holds the validated options.

    What an exception does depends on where it is raised:

    - a :class:`ragassay.RagassayError` (``ConfigError``, ``DatasetError``, ...) raised while a run is
      planned (options validated, nested references resolved, the dataset read) aborts the run before any
      work: the CLI prints it as one line and exits with code 2;
    - any exception from :meth:`RAGSystem.prepare` fails every unit of that system, with the reason;
    - any exception from :meth:`RAGSystem.answer` (and from the retriever or generator it calls) fails that
      one unit, with the reason; the run goes on;
    - any exception from a metric or judge is stored as unscored with ``error: ...``; the output is kept.
    """

    kind: ClassVar[str] = ""
    name: ClassVar[str] = ""
    Options: ClassVar[type[BaseModel]] = NoOptions

    def __init__(self, options: BaseModel | None = None, *, context: ComponentContext | None = None):
        self.options = options if options is not None else self.Options()
        self.context = context or ComponentContext()

    def call_pattern(self, sample: Sample, hints: Any) -> Any:
        """Hook for ``ragassay estimate`` (:mod:`ragassay.engine.estimate.rows`): the model calls this component
        makes for ``sample``, as a :class:`~ragassay.models.CallPattern` (exact, or a range where the count depends on
        the content), or None when it does not say (the estimate then reports it as unknown, never as 0).
        ``hints`` (:class:`~ragassay.models.Hints`) carries the assumed answer and context lengths. A component
        that calls a model through an :class:`~ragassay.llm.LLMGenerator` builds its pattern with
        :meth:`LLMGenerator.calls <ragassay.llm.LLMGenerator.calls>`."""
        return None

    @classmethod
    def description(cls) -> str:
        """First line of the class docstring."""
        doc = (cls.__doc__ or "").strip()
        return doc.splitlines()[0] if doc else ""


class Chunker(Component):
    """Splits documents into chunks. Must be deterministic."""

    kind = "chunker"

    def chunk(self, document: Document) -> list[Chunk]:
        """Return the chunks of ``document`` in order; ids must be unique and stable."""
        raise NotImplementedError


class Retriever(Component):
    """Finds the chunks most relevant to a query.

    ``index`` and ``retrieve`` are required. A retriever that can tell how it reached a result (query
    truncation, per-part ranks, cache state) overrides :meth:`retrieve_traced`; one that waits on a network
    service overrides :meth:`aretrieve`. RAG systems call :meth:`aretrieve_traced` and store the trace in
    ``RAGOutput.trace["retrieval"]``.
    """

    kind = "retriever"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("index")
        if callable(own) and not getattr(own, "_ragassay_reported", False):
            cls.index = reported_index(own)  # the phase "index (<name>)" is reported for every retriever

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Build the index over ``chunks`` (called once before any :meth:`retrieve`).

        ragassay reports the phase ``index (<name>)`` around it (start and end, in chunks); a retriever that
        takes long can report finer progress with :meth:`ComponentContext.progress`.
        """
        raise NotImplementedError

    def retrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Return at most ``k`` chunks, best first, ranks 1..n."""
        raise NotImplementedError

    def retrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """The hits of :meth:`retrieve` and a JSON-serialisable trace of this one query.

        Default: ``(self.retrieve(query, k), {})``. Override it (and make ``retrieve`` return its hits) to
        report per-query details; the trace belongs to this call only, so concurrent queries never mix.
        """
        return self.retrieve(query, k), {}

    async def aretrieve(self, query: str, k: int) -> list[ScoredChunk]:
        """Asynchronous :meth:`retrieve`; network retrievers override it to not block the event loop.

        Default: calls :meth:`retrieve`.
        """
        return self.retrieve(query, k)

    async def aretrieve_traced(self, query: str, k: int) -> tuple[list[ScoredChunk], dict[str, Any]]:
        """Asynchronous :meth:`retrieve_traced`: what RAG systems call.

        Default: :meth:`retrieve_traced` when the class overrides it, else ``(await self.aretrieve(...), {})``.
        """
        if type(self).retrieve_traced is not Retriever.retrieve_traced:
            return self.retrieve_traced(query, k)
        return await self.aretrieve(query, k), {}


class Reranker(Component):
    """Reorders candidate chunks for a query (a cross-encoder, an LLM, a lexical score).

    Used by retrievers that have a rerank step (``hybrid``'s ``reranker`` option). Contract of
    :meth:`rerank`: return at most ``k`` of ``candidates``, best first, with ranks 1..n and the reranker's own
    scores; it must be deterministic for the same inputs.
    """

    kind = "reranker"

    def rerank(self, query: str, candidates: list[ScoredChunk], k: int) -> list[ScoredChunk]:
        """The best ``k`` of ``candidates`` for ``query``, best first, ranks 1..n."""
        raise NotImplementedError


@dataclasses.dataclass
class Encoded:
    """Vectors of some texts, in input order, with what the embedder saw of each text.

    ``vectors`` is an (n, d) array or a list of n vectors; ``tokens`` the token count of each text (None when
    unknown); ``truncated`` whether each text was cut to ``max_tokens``.
    """

    vectors: Any
    tokens: list[int | None]
    truncated: list[bool]
    max_tokens: int | None = None

    @property
    def truncated_count(self) -> int:
        """How many texts were truncated."""
        return sum(self.truncated)


class Embedder(Component):
    """Turns texts into vectors (used by dense retrievers).

    Only :meth:`embed` is required. :meth:`encode` (vectors with token counts and truncation flags),
    :attr:`dimension` and :meth:`cache_identity` have defaults that an embedder refines when it knows more.
    """

    kind = "embedder"
    #: The vector size when known without embedding anything (a property in subclasses); None: unknown.
    dimension: int | None = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Return one vector per text, in order."""
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> Encoded:
        """Vectors of ``texts`` with what the embedder saw of each. Default: :meth:`embed`, nothing truncated."""
        texts = list(texts)
        return Encoded(self.embed(texts), [None] * len(texts), [False] * len(texts))

    def encode_queries(self, texts: Sequence[str]) -> Encoded:
        """Vectors of queries, computed together: each text must get the same vector whatever the other texts of
        the call (the dense retriever batches the questions of concurrent units into one call).

        Default: :meth:`encode`. An embedder whose vectors depend on the batch (padding to the longest text)
        refines it: the ``local`` embedder pads each query to a fixed bucket of its own length.
        """
        return self.encode(texts)

    def warm(self) -> None:
        """Load what the first query would otherwise load (a local model), so that the first unit's latency
        does not include it. Called by the dense retriever once its index is ready. Default: nothing."""

    def cache_identity(self) -> dict[str, Any]:
        """What decides the vectors (model identity and the options that change them, not batch sizes or
        thread counts): part of a vector cache key. Default: all the options."""
        return {"options": self.options.model_dump(mode="json")}


class GenerationRequest(BaseModel):
    """What a generator is asked: the question and contexts, and the chat messages built from them.

    Extractive generators read ``question`` and ``contexts``; LLM generators read ``messages``.
    """

    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The user's question.")
    contexts: list[Chunk] = Field(default_factory=list, description="Retrieved chunks, best first.")
    messages: list[dict[str, Any]] = Field(default_factory=list, description="Chat messages (role, content).")
    params: dict[str, Any] = Field(default_factory=dict, description="Decoding parameters (temperature, ...).")


class Generation(BaseModel):
    """A generator's answer with its token usage and raw trace."""

    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="The generated text.")
    usage: TokenUsage = Field(default_factory=TokenUsage, description="Tokens used by this generation.")
    raw: dict[str, Any] = Field(default_factory=dict, description="Provider-specific details.")


class Generator(Component):
    """Produces an answer from a request (extractive reader, LLM backend, ...).

    ``supports_chat`` declares the full chat interface of :class:`ragassay.llm.LLMGenerator` (``chat`` with
    tools, forced tool calls and structured output); components that need it call :meth:`require_chat`.
    """

    kind = "generator"
    #: True when the generator has ``chat(messages, tools=..., tool_choice=..., response_model=...)``.
    supports_chat: ClassVar[bool] = False

    async def generate(self, request: GenerationRequest) -> Generation:
        """Answer ``request``. Raise an exception to mark the sample failed."""
        raise NotImplementedError

    def require_chat(self, who: str) -> Generator:
        """Return self when it supports chat, else raise a ConfigError naming ``who`` needs it and what to use."""
        if not self.supports_chat:
            raise ConfigError(
                f"{who}: generator '{self.name}' does not support chat (tool calls, structured output); use an "
                "LLM generator instead: openai, anthropic or local (or any generator declaring supports_chat)"
            )
        return self


class Metric(Component):
    """Scores one output of one sample.

    Return a float, a :class:`MetricResult` (the value with details: per-segment verdicts, per-context scores,
    ...), or :class:`Unscored` with the reason. ``score`` is for cheap synchronous metrics; metrics that call
    models override ``ascore``. Model calls made through ``ragassay.llm`` while scoring are counted as the
    evaluation's own cost of the unit.

    Every metric declares its ``direction`` (is a higher value better?) and ``value_range``; tables highlight
    the best value by direction, and a value outside the range is stored as unscored with an error.
    """

    kind = "metric"
    #: One-line formula shown in docs and ``ragassay plugins``.
    formula: ClassVar[str] = ""
    #: Where the definition comes from (document and equation).
    source: ClassVar[str] = ""
    #: "higher" when a higher value is better, "lower" when a lower value is better.
    direction: ClassVar[Literal["higher", "lower"]] = "higher"
    #: Inclusive (low, high) bounds of a value; None for an open end (the default: unbounded).
    value_range: ClassVar[tuple[float | None, float | None]] = (None, None)
    #: Whether the value depends on the generated answer. On the output of a system that gives no answer
    #: (``RAGSystem.answers = False``, e.g. the ``retrieval`` rag) such a metric is stored as unscored with the
    #: reason instead of being called. Set it to False in a metric that reads only the question, the contexts
    #: and the references (retrieval metrics); the default (True) is the safe one.
    uses_answer: ClassVar[bool] = True
    #: The inputs the value cannot do without, named from :data:`ragassay.models.INPUTS` (``"reference_answers"``,
    #: ``"answer"``, ``"contexts"``, ...; docs/metrics.md, Required inputs). Before any call, a run refuses a listed
    #: metric whose sample inputs no sample has, and warns when some samples lack them. Default: nothing declared,
    #: nothing checked.
    requires: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def required(cls, options: BaseModel) -> frozenset[str]:
        """The inputs this metric configured with ``options`` needs; by default :attr:`requires`. A metric whose
        needs depend on its options overrides it."""
        return cls.requires

    @classmethod
    def declared(cls, options: BaseModel) -> tuple[str, tuple[float | None, float | None]]:
        """(direction, value_range) of this metric configured with ``options``; by default the class attributes.
        A metric whose direction or range depends on its options (``formula``) overrides it."""
        return cls.direction, cls.value_range

    def score(self, sample: Sample, output: RAGOutput) -> float | MetricResult | Unscored:
        """The value for one (sample, output); an exception is stored as unscored with ``error: ...``."""
        raise NotImplementedError

    async def ascore(self, sample: Sample, output: RAGOutput) -> float | MetricResult | Unscored:
        return self.score(sample, output)


class DerivedMetric(Metric):
    """A metric computed from other metrics of the same unit (e.g. the INFO thesis' full score, Eq. 5.1).

    ``inputs()`` names the metric labels it needs (as configured in ``[evaluation] metrics``); the runner
    computes those first and calls ``derive`` with their values (None where unscored). Configuring a derived
    metric whose input is not configured is a configuration error.
    """

    uses_answer: ClassVar[bool] = False  # reads its inputs' values (an answer-based input is unscored itself)
    requires: ClassVar[frozenset[str]] = frozenset({"metric_values"})

    def inputs(self) -> list[str]:
        """The metric labels this metric is computed from."""
        raise NotImplementedError

    def derive(self, values: dict[str, float | None]) -> float | MetricResult | Unscored:
        """The value from the inputs' values (None for an unscored input)."""
        raise NotImplementedError

    def score(self, sample: Sample, output: RAGOutput) -> float | MetricResult | Unscored:
        raise TypeError(f"derived metric '{self.name}' is computed from other metrics by the runner")


class Judge(Component):
    """Decides whether an output is correct (or scores it), with an explanation."""

    kind = "judge"
    #: True for a judge that compares the answer with the sample's reference answers, so that its verdicts can
    #: stand for the truth (``ragassay meta-eval``'s default ground truth is the first such judge of a run).
    reference_based: ClassVar[bool] = False
    #: Whether the verdict depends on the generated answer (see :attr:`Metric.uses_answer`): on the output of a
    #: system that gives no answer, such a judge's verdict is stored as unscored with the reason.
    uses_answer: ClassVar[bool] = True
    #: The inputs the verdict cannot do without (see :attr:`Metric.requires`). Default: nothing declared, nothing
    #: checked.
    requires: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def required(cls, options: BaseModel) -> frozenset[str]:
        """The inputs this judge configured with ``options`` needs; by default :attr:`requires`."""
        return cls.requires

    async def judge(self, sample: Sample, output: RAGOutput) -> Judgement:
        """The verdict on one output; an exception is stored as an unscored judgement with ``error: ...``."""
        raise NotImplementedError


class DatasetSource(Component):
    """Provides samples, and optionally the documents of a corpus."""

    kind = "dataset_source"

    def samples(self) -> Iterable[Sample]:
        """Yield the samples (question_id must be unique).

        Read once per run and consumed lazily: a generator streams a dataset of any size (ragassay spools the
        samples to a temporary file as they come and never holds them all in memory; ``[dataset] limit``
        stops reading early). Reading the same data twice should yield the same samples, as for every
        component (``ragassay generate`` and each run read it again).
        """
        return iter(())

    def documents(self) -> Iterable[Document]:
        """Yield corpus documents (empty for sources that only provide questions)."""
        return iter(())

    def plan(self) -> list[dict[str, Any]] | None:
        """Describe what :meth:`samples` would produce, without producing it (``ragassay generate --dry-run``).

        Return one dict per unit of generation (for example per template, with its counts), or None when the
        source cannot tell in advance.
        """
        return None

    def summary(self) -> list[dict[str, Any]]:
        """What the last :meth:`samples` produced, one dict per unit of generation (for example per template:
        pairs kept, combinations rejected), shown by ``ragassay generate``. Default: nothing to report."""
        return []


@dataclasses.dataclass
class Retrieved:
    """What the retrieval step of a RAG system found for one sample (see :meth:`RAGSystem.retrieve_step`).

    ``chunks`` best first; ``scores`` one per chunk (empty when the system has none); ``trace`` the JSON-serialisable
    trace of the retrieval (stored as ``RAGOutput.trace["retrieval"]``).
    """

    chunks: list[Chunk]
    scores: list[float] = dataclasses.field(default_factory=list)
    trace: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class Role:
    """A part a RAG system is built from: its kind, a default component name, whether it is required."""

    kind: str
    default: str | None = None
    required: bool = True
    description: str = ""


class RAGSystem(Component):
    """A complete system under evaluation: answers a sample with an answer and the contexts it used.

    ``roles`` declares the parts a config can set or swap (``retriever = "bm25"``); ragassay builds them
    and passes them as ``parts``. ``prepare`` runs once per run with the corpus before any ``answer``.
    """

    kind = "rag"
    roles: ClassVar[dict[str, Role]] = {}
    #: How the system uses retrieval, stored with the run (``ragassay decisions`` finds its systems by it):
    #: "always" (retrieves for every sample), "never" (answers from the model alone), "decides" (an agent that
    #: chooses per sample), or None (not declared).
    retrieval: ClassVar[Literal["always", "never", "decides"] | None] = None
    #: False for a system that gives no answer (a retrieval-only system: ranked contexts only). Metrics and
    #: judges that read the answer (``uses_answer``) are then unscored with the reason, never scored on an empty
    #: answer; stored with the run as the trait ``answers = false``.
    answers: ClassVar[bool] = True
    #: True for a system that replays outputs produced elsewhere (``precomputed``, ``trace_replay``) instead of
    #: executing anything: the latency it sets on an output (the recorded one) is kept, never replaced by the
    #: time the replay took. Stored with the run as the trait ``replays = true``.
    replays: ClassVar[bool] = False
    #: True for a system whose purpose includes answering without context (``perturbed`` with ``drop_gold``): the
    #: run then does not warn that its outputs came back with no retrieved context. Set it on the class, or on the
    #: instance when it depends on the options.
    empties_contexts: bool = False

    def __init__(
        self,
        options: BaseModel | None = None,
        *,
        parts: dict[str, Component] | None = None,
        context: ComponentContext | None = None,
    ):
        super().__init__(options, context=context)
        self.parts = parts or {}

    @classmethod
    def content_key(cls, options: BaseModel, context: ComponentContext) -> str | None:
        """A digest of what decides this system's answers besides its options (the file a ``precomputed``
        system replays, the source of a ``python`` callable), or None when the options say it all (default).

        It joins the system's key and the run's fingerprint: after such a file changes, ``ragassay run`` starts a
        new run and answers afresh instead of resuming or reusing stale outputs.
        """
        return None

    def prepare(self, corpus: Corpus) -> None:
        """Index the corpus. Default: nothing. An exception here fails every unit of this system."""

    def check_samples(self, samples: Iterable[Sample]) -> list[str]:
        """Warnings about the run's samples (e.g. precomputed outputs matching no sample). Default: none.

        ``samples`` streams the run's samples from disk each time it is iterated (``len()`` works; indexing
        does not): iterate it, never keep it whole.
        """
        return []

    async def answer(self, sample: Sample) -> RAGOutput:
        """Answer one sample. Raise an exception to mark the sample failed (the run goes on)."""
        raise NotImplementedError

    #: For a wrapper system (one that runs another system of the run with something changed, e.g. ``perturbed``):
    #: the name of its option that names the wrapped system. ragassay then resolves that system (its parts are the
    #: wrapper's parts, its RAG spec is stored as the wrapper's component under that option name) and sets
    #: :attr:`wrapped` to it, built and shared by all the wrappers of that system in the process (the wrapper's
    #: :meth:`prepare` must prepare it). None: not a wrapper (default).
    wraps: ClassVar[str | None] = None
    #: The built wrapped system of a wrapper (see :attr:`wraps`); None otherwise.
    wrapped: RAGSystem | None = None

    @classmethod
    def check_wrapped(cls, wrapped: type[RAGSystem], options: BaseModel) -> None:
        """Raise :class:`ragassay.ConfigError` when a wrapper configured with ``options`` cannot wrap a system of
        class ``wrapped`` (called when the run is planned). Default: any system."""

    def wrapped_system(self) -> RAGSystem:
        """A wrapper's built :attr:`wrapped` system; a ConfigError when it was built outside a run's config."""
        if self.wrapped is None:
            raise ConfigError(f"the {self.name} rag was built without its wrapped system; build it with a run's config")
        return self.wrapped

    def prepare_wrapped(self, corpus: Corpus) -> None:
        """Prepare the wrapped system, shared by its wrappers, once per corpus (from a wrapper's :meth:`prepare`)."""
        inner = self.wrapped_system()
        self.context.shared(("prepared system", id(inner), id(corpus)), lambda: inner.prepare(corpus) or True)

    async def close_wrapped(self) -> None:
        """Close the wrapped system, shared by its wrappers, once: a wrapper's :meth:`aclose` calls this."""
        if self.wrapped is not None and not (closed := self.context.shared(("closed system", id(self.wrapped)), list)):
            closed.append(True)
            await self.wrapped.aclose()

    @classmethod
    def has_steps(cls) -> bool:
        """Whether the class implements the optional pair :meth:`retrieve_step` / :meth:`answer_from`."""
        return cls.retrieve_step is not RAGSystem.retrieve_step and cls.answer_from is not RAGSystem.answer_from

    async def retrieve_step(self, sample: Sample) -> Retrieved:
        """Optional: the retrieval step of :meth:`answer` alone (the chunks the generator would be given).

        A system that implements it and :meth:`answer_from` (so that ``answer_from(s, await retrieve_step(s))`` is
        ``answer(s)``) can be wrapped by components that work between retrieval and generation (``perturbed``:
        distractors, a dropped gold chunk, reordering, ...). ``naive`` and ``retrieval`` implement both.
        """
        raise NotImplementedError

    async def answer_from(self, sample: Sample, retrieved: Retrieved) -> RAGOutput:
        """Optional: the generation step of :meth:`answer`, from the given retrieval (see :meth:`retrieve_step`)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Release clients and connections after the run. Default: nothing."""


class RunSection(Component):
    """A section of the HTML report and of a ``ragassay serve`` page: blocks (:class:`ragassay.Section` with
    :class:`ragassay.Table`, :class:`ragassay.Note`, ...) computed from one stored run (docs/plugins.md, "Sections
    and pages"). Text in a block is escaped when rendered; only a :class:`ragassay.Plot`'s SVG is markup.

    The ``view`` given to :meth:`sections` has ``run`` (the run read once: ``systems``, ``samples``,
    ``scores_frame()``, ...), ``baseline``, ``alpha`` and ``seed`` (the report's or the page's settings),
    ``params`` (the page's other query parameters; empty in the report) and ``shared(key, compute)`` (a value
    computed once per run and settings, shared by the sections of a report or of the app).
    """

    kind = "section"
    #: The ``ragassay serve`` page the section appears on, below ``/runs/RUN``: "" is the run's first page,
    #: "breakdowns" or "cost" a shipped one; another name makes a new page with its own tab.
    page: ClassVar[str] = ""
    #: The label of the page's tab (its first section's label counts; default: the page name).
    tab: ClassVar[str] = ""
    #: Where the section goes in each run of the HTML report, smaller first (the shipped ones use 1 to 100;
    #: equal values keep the order of registration); None leaves it out of the report.
    report_order: ClassVar[float | None] = 1000

    def absent(self, run: Any) -> str:
        """Why ``run`` has nothing for this section ("" when it has, the default); a page whose sections are all
        absent has no tab for that run and answers 404 with the reason."""
        return ""

    def sections(self, view: Any) -> Any:
        """A :class:`ragassay.Section`, a list of them, or None (nothing to show for this run)."""
        raise NotImplementedError


#: Component base class for each hook kind.
KIND_BASES: dict[str, type[Component]] = {
    cls.kind: cls
    for cls in (Chunker, Retriever, Reranker, Embedder, Generator, Metric, Judge, DatasetSource, RAGSystem, RunSection)
}


class Corpus:
    """The documents of a run, with chunking memoised per chunker configuration."""

    def __init__(self, documents: Sequence[Document]):
        self.documents = list(documents)
        self._chunks: dict[str, list[Chunk]] = {}

    def chunks(self, chunker: Chunker) -> list[Chunk]:
        """All chunks of the corpus by ``chunker`` (computed once per chunker name and options)."""
        key = f"{chunker.name}:{chunker.options.model_dump_json()}"
        if key not in self._chunks:
            self._chunks[key] = self._chunk_all(chunker)
        return self._chunks[key]

    def _chunk_all(self, chunker: Chunker) -> list[Chunk]:
        """Chunk every document, reporting the phase ``chunking`` about every 1% of the documents."""
        total, chunks = len(self.documents), []
        step = max(1, -(-total // 100))  # at most 100 reports
        chunker.context.progress("chunking", 0, total, "documents")
        for done, document in enumerate(self.documents, start=1):
            chunks += chunker.chunk(document)
            if done % step == 0 or done == total:
                chunker.context.progress("chunking", done, total, "documents")
        return chunks

    def content_hash(self) -> str:
        """sha256 over document ids, titles and texts, in order."""
        import hashlib

        digest = hashlib.sha256()
        for doc in self.documents:
            for part in (doc.id, doc.title, doc.text):
                digest.update(part.encode("utf-8"))
                digest.update(b"\x00")
        return digest.hexdigest()
