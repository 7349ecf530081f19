"""Budgets: a cap on the model calls, tokens, money and time one ``ragassay run`` session may spend.

``[evaluation] budget = { usd = 20, calls = 5000, tokens = 2e6, seconds = 3600 }`` (any subset) or
``ragassay run --budget calls=100,usd=5``. The runner installs a :class:`BudgetLedger` for the session
(:func:`using`); :class:`~ragassay.llm.client.LLMClient` asks it before every attempt it sends to a backend
(:meth:`BudgetLedger.reserve`), so every generator, metric and judge that calls a model through the client is
covered. Responses served from the response cache cost nothing and are never refused.

The rule: an attempt starts only if its **worst case**, added to what was spent and to the worst cases of the
attempts still in flight, stays within every limit. An attempt's worst case is 1 call; tokens = the estimated
prompt tokens (:func:`prompt_tokens`: characters / 4 of the messages, tools and output schema) + ``max_tokens``
of its decoding parameters (:data:`OUTPUT_RESERVE` tokens when the request sets none: then the guarantee holds
only as far as replies stay within that reserve); usd = that usage at the model's list price (a model without a
price cannot be kept within a usd budget: its calls are refused, with the reason). When an attempt ends, its
reservation is replaced by what the provider reported (the estimated prompt tokens when it reports no usage;
a failed attempt counts 1 call and its estimated prompt tokens). ``seconds``: no attempt starts once that many
seconds have passed since the session started.

The first refusal stops the session (every later attempt is refused too, so what was scored is a prefix of the
seeded sample order): the runner starts no new work, drops the values whose calls were refused (nothing partial
is stored), and marks the run ``budget-limited``. A budget limits one session: a resumed run gets it afresh and
spends it only on the work still missing.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..errors import ConfigError
from ..models import TokenUsage

CHARS_PER_TOKEN = 4  # the documented approximation when no tokenizer of the model family is known
OUTPUT_RESERVE = 1024  # output tokens reserved for a request that sets no max_tokens


class Budget(BaseModel):
    """``[evaluation] budget``: limits of one run session (any subset; an absent limit does not apply)."""

    model_config = ConfigDict(extra="forbid")

    usd: float | None = Field(None, gt=0, description="Most US dollars of model calls, at the price table's prices.")
    calls: int | None = Field(None, ge=1, description="Most model calls (every attempt counts, retries included).")
    tokens: int | None = Field(None, ge=1, description="Most tokens (input + output) of model calls.")
    seconds: float | None = Field(None, gt=0, description="No model call starts after this many seconds of the run.")

    @field_validator("tokens", "calls", mode="before")
    @classmethod
    def _whole(cls, value: Any) -> Any:
        if isinstance(value, float) and value.is_integer():
            return int(value)  # tokens = 2e6 in TOML is a float
        return value

    def is_set(self) -> bool:
        return any(v is not None for v in self.model_dump().values())

    def describe(self) -> str:
        """``calls=100, usd=5`` (the limits that are set)."""
        return ", ".join(f"{k}={v:g}" for k, v in self.model_dump().items() if v is not None) or "none"

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``calls=100,usd=5`` (what ``run --budget`` takes); raises :class:`ConfigError` on bad input: one line
        that names the limit, what is wrong and what to write."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, value = (s.strip() for s in part.partition("="))
            if not sep or key not in cls.model_fields:
                raise ConfigError(
                    f"--budget: '{part}' is not KEY=VALUE with KEY one of {', '.join(cls.model_fields)} "
                    f"(e.g. {BUDGET_EXAMPLE})"
                )
            if key in values:
                raise ConfigError(f"--budget: {key} is given twice; give each limit once (e.g. {BUDGET_EXAMPLE})")
            values[key] = _limit(key, value)
        if not values:
            raise ConfigError(f"--budget: give at least one limit, e.g. {BUDGET_EXAMPLE}")
        return cls.model_validate(values)


BUDGET_EXAMPLE = "--budget calls=100,usd=5"
#: What each limit of ``--budget`` must be, in words.
LIMIT_WORDS = {
    "usd": "a number of US dollars above 0, e.g. usd=5",
    "calls": "a whole number of at least 1, e.g. calls=100",
    "tokens": "a whole number of at least 1, e.g. tokens=2e6",
    "seconds": "a number of seconds above 0, e.g. seconds=3600",
}


def _limit(key: str, value: str) -> float:
    """The number ``value`` of limit ``key``; a :class:`ConfigError` saying what to write when it is none."""
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    whole = key in ("calls", "tokens")
    if not math.isfinite(number) or number <= 0 or (whole and (number < 1 or not number.is_integer())):
        shown = f"'{value}'" if value else "nothing"
        raise ConfigError(f"--budget {key}={value}: {shown} is not {LIMIT_WORDS[key]}")
    return number


class BudgetExhausted(BaseException):  # noqa: N818 - like CancelledError: passes every `except Exception`
    """A model call refused by the budget. A BaseException, so that no metric or judge records it as an
    ordinary error (the runner drops the value instead); components must let it propagate."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def prompt_tokens(request: Any) -> int:
    """Estimated prompt tokens of an :class:`~ragassay.llm.types.LLMRequest`: characters / 4 (rounded up) of
    the messages' text and tool-call arguments, the tools and the output schema."""
    chars = sum(len(m.content) + sum(len(c.raw_arguments) for c in m.tool_calls) for m in request.messages)
    if request.tools:
        chars += len(json.dumps([t.model_dump(mode="json") for t in request.tools]))
    if request.response_schema:
        chars += len(json.dumps(request.response_schema))
    return math.ceil(chars / CHARS_PER_TOKEN)


@dataclasses.dataclass
class Ticket:
    """One attempt's reservation."""

    model_key: str
    prompt: int
    tokens: int
    usd: float


class BudgetLedger:
    """What a session has spent and reserved against its :class:`Budget` (thread-safe)."""

    def __init__(self, budget: Budget, prices: Any = None, clock: Callable[[], float] = time.monotonic):
        from .pricing import PriceTable

        self.budget = budget
        self.prices = prices or PriceTable()
        self.clock = clock
        self.started = clock()
        self.calls = self.tokens = 0
        self.usd = 0.0
        self._reserved = [0, 0, 0.0]  # calls, tokens, usd in flight
        self.stopped: str | None = None  # why the session stopped (the first refusal)
        self._lock = threading.Lock()

    def spent(self) -> dict[str, float]:
        return {"calls": self.calls, "tokens": self.tokens, "usd": round(self.usd, 6)}

    def check_time(self) -> str | None:
        """The reason to stop, if the session is stopped or out of time (without reserving anything)."""
        seconds = self.budget.seconds
        if self.stopped is None and seconds is not None and self.clock() - self.started >= seconds:
            self.stopped = f"the budget's {seconds:g} s have passed"
        return self.stopped

    def reserve(self, request: Any, model_key: str) -> Ticket:
        """Reserve one attempt's worst case, or raise :class:`BudgetExhausted` (see the module docstring)."""
        prompt = prompt_tokens(request)
        worst = prompt + (request.params.max_tokens or OUTPUT_RESERVE)
        with self._lock:
            if self.check_time() is not None:
                raise BudgetExhausted(self.stopped)
            usd = 0.0
            if self.budget.usd is not None:
                cost = self.prices.cost(TokenUsage(input_tokens=prompt, output_tokens=worst - prompt), model_key)
                if cost is None:
                    self._refuse(f"model {model_key} has no price, so a usd budget cannot be kept (add [llm.prices])")
                usd = cost
            calls, tokens, dollars = self._reserved
            b = self.budget
            if b.calls is not None and self.calls + calls + 1 > b.calls:
                self._refuse(f"the budget's {b.calls} calls are used up")
            if b.tokens is not None and self.tokens + tokens + worst > b.tokens:
                self._refuse(f"the next call could pass the budget's {b.tokens} tokens ({self.tokens} spent)")
            if b.usd is not None and self.usd + dollars + usd > b.usd:
                self._refuse(f"the next call could pass the budget's {b.usd:g} USD ({self.usd:.4f} spent)")
            self._reserved = [calls + 1, tokens + worst, dollars + usd]
            return Ticket(model_key, prompt, worst, usd)

    def _refuse(self, reason: str) -> None:
        self.stopped = reason
        raise BudgetExhausted(reason)

    def settle(self, ticket: Ticket, usage: TokenUsage | None) -> None:
        """Replace ``ticket``'s reservation with what the attempt used (None: it failed)."""
        used = usage.input_tokens + usage.output_tokens if usage is not None else 0
        tokens = used or ticket.prompt
        cost = None
        if usage is not None and used:
            cost = self.prices.cost(usage, ticket.model_key)
        if cost is None:
            cost = self.prices.cost(TokenUsage(input_tokens=ticket.prompt), ticket.model_key) or 0.0
        with self._lock:
            calls, reserved, dollars = self._reserved
            self._reserved = [calls - 1, reserved - ticket.tokens, dollars - ticket.usd]
            self.calls += 1
            self.tokens += tokens
            self.usd += cost


_current: contextvars.ContextVar[BudgetLedger | None] = contextvars.ContextVar("ragassay_budget", default=None)


def current() -> BudgetLedger | None:
    """The ledger of the session running in this context, if it has a budget."""
    return _current.get()


@contextlib.contextmanager
def using(ledger: BudgetLedger | None) -> Iterator[BudgetLedger | None]:
    """Install ``ledger`` for the calls made in this context and the tasks started inside it."""
    token = _current.set(ledger)
    try:
        yield ledger
    finally:
        _current.reset(token)
