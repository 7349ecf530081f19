"""LLMGenerator: the generator base class of every model backend, and the options they share.

``generate(request)`` answers a RAG system's request; ``chat(...)`` is the full interface that judges and
agentic RAG systems use on the same object: tools, forced tool calls, structured output::

    generator = context.build("generator", {"name": "openai", "options": {"model": "gpt-4o-mini"}})
    reply = await generator.chat(messages, tools=[Retrieve], tool_choice="Retrieve")
    verdict = (await generator.chat(messages, response_model=Verdict)).parsed
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..components import Generation, GenerationRequest, Generator
from ..errors import ConfigError
from .backend import LLMBackend, PerLoop, shards_for
from .client import LLMClient
from .pricing import PriceTable
from .retry import RetryPolicy
from .settings import runtime_from_context
from .types import ChatMessage, DecodingParams, LLMResponse, ToolSpec


class LLMOptions(BaseModel):
    """Options every LLM generator has: the model, decoding defaults, caching, structured-output retries."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = Field(description="Model name as the provider knows it.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature; 0 = greedy (the default).")
    top_p: float | None = Field(None, gt=0, le=1, description="Nucleus sampling mass (provider default if unset).")
    seed: int | None = Field(None, description="Sampling seed, where the backend supports one.")
    max_tokens: int | None = Field(None, ge=1, description="Most tokens to generate per call.")
    stop: list[str] = Field(default_factory=list, description="Stop sequences.")
    cache: bool = Field(True, description="Use the response cache for this component (also needs [llm] cache).")
    cache_tag: str = Field(
        "",
        description="Extra text mixed into cache keys, e.g. to tell two servers apart "
        "that serve different models under one name.",
    )
    structured_retries: int = Field(
        2, ge=0, le=10, description="Corrective re-asks when structured output or a forced tool call is invalid."
    )


class RemoteOptions(LLMOptions):
    """Options of backends reached over HTTP: endpoint, key, timeouts, retries, rate limits."""

    base_url: str | None = Field(None, description="Base URL of an OpenAI/Anthropic-compatible server.")
    api_key_env: str | None = Field(
        None,
        description="Environment variable holding the API key "
        "(default: the provider's usual one). Keys never go in configs.",
    )
    timeout_s: float = Field(60.0, gt=0, description="Seconds one attempt may take before it is retried.")
    retry_deadline_s: float = Field(
        120.0,
        gt=0,
        description="A call that fails with a 429, 5xx, timeout or connection error is retried until this many "
        "seconds after its first failure (Retry-After waits honoured within it); then it fails with the reason.",
    )
    max_retries: int | None = Field(
        None, ge=0, le=1000, description="At most this many retries as well (None: as many as retry_deadline_s allows)."
    )
    backoff_s: float = Field(1.0, ge=0, description="First backoff delay; doubles per retry (with jitter).")
    max_backoff_s: float = Field(30.0, ge=0, description="Longest backoff delay.")
    max_retry_after_s: float = Field(120.0, ge=0, description="Longest wait honoured from a Retry-After header.")
    concurrency: int = Field(8, ge=1, le=1024, description="Most calls in flight to this backend and endpoint.")
    requests_per_minute: int | None = Field(
        None,
        ge=1,
        description="Most calls (retries included) started in any 60 s window to this backend and endpoint; "
        "None: no bound. Shared like concurrency: the smallest value declared wins.",
    )
    stream: bool = Field(False, description="Stream responses (a truncated stream is detected and retried).")


_PARAM_KEYS = set(DecodingParams.model_fields) | {"sample_index"}


class RemoteBackend(LLMBackend):
    """Base class of backends reached over HTTP with :class:`~ragassay.llm.RemoteOptions` (or options built on
    it): keeps ``options``, takes the retry policy and the rate limits from them, and keeps SDK clients per
    event loop (:class:`PerLoop`, one per 8 concurrent calls). Subclasses set ``name``, implement
    :meth:`make_client` and :meth:`complete`, and get a client there with ``self.client()``::

        class MyBackend(RemoteBackend):
            name = "mine"

            def make_client(self):
                return mysdk.AsyncClient(base_url=self.options.base_url, timeout=self.options.timeout_s)

            async def complete(self, request):
                reply = await self.client().generate(...)
    """

    def __init__(self, options: RemoteOptions):
        super().__init__(options.model)
        self.options = options
        self._clients: PerLoop[Any] = PerLoop(self.make_client, shards_for(options.concurrency))

    def make_client(self) -> Any:
        """A new SDK client for the running event loop."""
        raise NotImplementedError

    def client(self) -> Any:
        """A client of the running event loop (made on first use; shards handed out in turn)."""
        return self._clients.get()

    def retry_policy(self) -> RetryPolicy:
        o = self.options
        return RetryPolicy(
            o.max_retries, o.backoff_s, o.max_backoff_s, o.max_retry_after_s, o.timeout_s, deadline_s=o.retry_deadline_s
        )

    def concurrency(self) -> int:
        return self.options.concurrency

    def requests_per_minute(self) -> int | None:
        return self.options.requests_per_minute


class LLMGenerator(Generator):
    """Base of generators backed by a language model. Subclasses implement :meth:`make_backend`."""

    Options = LLMOptions
    supports_chat: ClassVar[bool] = True

    def __init__(self, options: BaseModel | None = None, *, context: Any = None):
        super().__init__(options, context=context)
        self._client: LLMClient | None = None
        self._defaults: DecodingParams | None = None

    def make_backend(self) -> LLMBackend:
        """Create the backend (no network, no key reading: that happens on the first call)."""
        raise NotImplementedError

    @property
    def client(self) -> LLMClient:
        """The client (cache, limits, retries, accounting) around this generator's backend."""
        if self._client is None:
            runtime = runtime_from_context(self.context)
            cache = None
            if runtime.cache and self.options.cache:
                from .cache import open_cache  # SQLAlchemy: only a run that caches imports it for its calls

                cache = open_cache(runtime.cache_url)
            self._client = LLMClient(
                self.make_backend(),
                cache=cache,
                prices=PriceTable(runtime.prices),
                structured_retries=self.options.structured_retries,
            )
        return self._client

    def calls(
        self,
        prompt_chars: int,
        low: int = 1,
        high: int | None = 1,
        note: str = "",
        *,
        messages: Sequence[Sequence[dict[str, Any]]] | None = None,
    ) -> Any:
        """A :class:`~ragassay.models.CallPattern` of ``low``..``high`` calls to this generator sending
        ``prompt_chars`` characters in all (for :meth:`Component.call_pattern <ragassay.Component.call_pattern>`
        hooks; no network).

        ``messages``: the chat messages of each of the ``low`` calls (run-time texts as
        :func:`ragassay.llm.answer_text` assumes them); with them, a generator whose :meth:`token_counter` knows
        its model's tokenizer counts the prompt tokens with it (else they are characters / 4)."""
        from ..models import CallPattern

        key = f"{self.make_backend().name}/{self.options.model}"
        output, reasoning = self.options.max_tokens, self.assumed_reasoning_tokens()
        if reasoning and self.reasoning_within_max_tokens() and output is not None:
            reasoning = min(reasoning, output)  # the bound holds both: reasoning first, the rest is the answer
            output -= reasoning
        pattern = CallPattern(low, high, prompt_chars, output, key, note, reasoning_tokens=reasoning)
        counter = self.token_counter() if messages is not None else None
        if counter is not None:
            pattern.prompt_tokens = sum(counter.count(list(m)) for m in messages or [])
            pattern.tokenizer = counter.name
        return pattern

    def assumed_reasoning_tokens(self) -> int:
        """Reasoning (thinking) tokens ``ragassay estimate`` assumes per call under this generator's reasoning
        options (0: none, the default). A generator with a reasoning option overrides it and documents its
        assumption."""
        return 0

    def reasoning_within_max_tokens(self) -> bool:
        """True when the provider counts reasoning inside ``max_tokens`` (OpenAI's max_completion_tokens), False
        when it comes on top of it (the default)."""
        return False

    def token_counter(self) -> Any:
        """What counts this model's prompt tokens for ``ragassay estimate``: an object with ``name`` (shown in the
        estimate) and ``count(messages) -> int`` (the tokens of one call's chat messages as the model sees them,
        chat template included), or None when the model family's tokenizer is not known here (the default:
        characters / 4). Loading a tokenizer must wait for the first ``count``."""
        return None

    def decoding(self, overrides: dict[str, Any] | None = None) -> DecodingParams:
        """The options' decoding parameters with per-call ``overrides``."""
        if not overrides and self._defaults is not None:
            return self._defaults
        o = self.options
        base = {
            "temperature": o.temperature,
            "top_p": o.top_p,
            "seed": o.seed,
            "max_tokens": o.max_tokens,
            "stop": o.stop,
        }
        params = DecodingParams.model_validate({**base, **(overrides or {})})
        if not overrides:
            self._defaults = params  # shared, never mutated
        return params

    async def chat(
        self,
        messages: Sequence[ChatMessage | dict[str, Any]],
        *,
        tools: Sequence[ToolSpec | type[BaseModel]] = (),
        tool_choice: str | None = None,
        response_model: type[BaseModel] | None = None,
        params: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> LLMResponse:
        """Call the model with tools, a forced tool (``tool_choice=name``) or a ``response_model``.

        Returns :class:`LLMResponse` (``parsed`` holds the validated object). Raises ProviderError.
        """
        return await self.client.chat(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            response_model=response_model,
            params=self.decoding(params),
            sample_index=sample_index,
        )

    async def generate(self, request: GenerationRequest) -> Generation:
        """Send ``request.messages`` (or the bare question); ``request.params`` overrides decoding."""
        params = dict(request.params)
        unknown = set(params) - _PARAM_KEYS
        if unknown:
            raise ConfigError(
                f"generator {self.name}: unknown request params {sorted(unknown)}; "
                f"allowed: {', '.join(sorted(_PARAM_KEYS))}"
            )
        sample_index = int(params.pop("sample_index", 0))
        messages = request.messages or [{"role": "user", "content": request.question}]
        response = await self.chat(messages, params=params, sample_index=sample_index)
        return Generation(text=response.text, usage=response.usage, raw=response_trace(self.client, response))


def response_trace(client: LLMClient, response: LLMResponse) -> dict[str, Any]:
    """What a response adds to an output's trace (no secrets: model, cache flag, finish, cost, tool calls)."""
    trace: dict[str, Any] = {
        "backend": client.backend.name,
        "model": response.model or client.backend.model,
        "cached": response.cached,
        "finish_reason": response.finish_reason,
        "cost_usd": response.cost_usd,
    }
    if response.tool_calls:
        trace["tool_calls"] = [c.model_dump(include={"name", "arguments"}) for c in response.tool_calls]
    return trace
