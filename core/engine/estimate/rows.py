"""``ragassay estimate``: the model calls, tokens and cost a run will make, before it makes any.

Per system, metric and judge, summed over the samples:

- **calls**: from the component's :meth:`~ragassay.components.Component.call_pattern` hook (a
  :class:`CallPattern` per sample: exact, or a range where the count depends on the content, e.g. claims per
  answer or corrective re-asks). A component with no model component anywhere in its options (and, for a system,
  in its parts) makes no calls: 0, exact. A component with a model component that does not implement the hook is
  reported as *unknown*, with that reason (never as 0).
- **tokens**: the pattern's prompt tokens: counted with the model family's own tokenizer where the generator
  knows it (:meth:`~ragassay.llm.LLMGenerator.token_counter`; the ``local`` generator: its model's tokenizer with
  its chat template), else estimated as characters / 4 (:data:`~ragassay.llm.budget.CHARS_PER_TOKEN`), of the
  prompt templates filled with the sample (each row names its rule in :attr:`Row.tokenizer`). The answer, not
  known before the run, is taken to be as long as the sample's longest reference answer
  (:attr:`Hints.answer_chars`); retrieved contexts as ``top_k`` chunks of the chunker's ``size``
  (:attr:`Hints.context_chars`); assumed texts count as characters / 4 under any tokenizer. Output tokens: the
  model's ``max_tokens`` where set, else unknown (the cost is then a lower bound and says so). Reasoning tokens:
  under a generator's reasoning option, its assumption per call (:attr:`CallPattern.reasoning_tokens`: the
  thinking budget for Anthropic, a figure per reasoning effort for OpenAI), priced at the reasoning price.
- **cost**: tokens at the price table's prices (:mod:`ragassay.llm.pricing`); None (unknown) for an unpriced model.

Cache hits are not subtracted yet (the estimate is an upper bound for a run that re-uses cached replies).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import json
import math
from collections.abc import Iterable
from typing import Any

from ...llm.budget import CHARS_PER_TOKEN
from ...models import CHARS_RULE, CallPattern, Hints  # noqa: F401 - CHARS_RULE: re-exported


@dataclasses.dataclass
class Row:
    """The estimate of one component over every sample."""

    system: str
    component: str  # "system", "metric:LABEL" or "judge:LABEL"
    calls_low: int | None = 0
    calls_high: int | None = 0
    input_tokens: int = 0
    output_tokens_max: int | None = 0
    usd: float | None = 0.0
    note: str = ""
    stored_calls: int = 0  # calls (low end) not counted: their values are stored in the run being resumed
    cached_calls: int = 0  # calls (low end) not counted: the response cache answers them
    samples: int = 0  # samples counted (not stored)
    piloted_calls: int | None = None  # with --pilot, for a range: the pilot's calls per sample x samples
    piloted_tokens: int | None = None  # the same for input tokens (as the model counted them)
    shared: str | None = None  # the patterns' shared key (see CallPattern.shared)
    tokenizer: str = ""  # how input tokens were counted (CallPattern.tokenizer; "a + b" when both were used)
    reasoning_tokens: int = 0  # reasoning (thinking) tokens assumed by the generators' reasoning options

    def add(self, pattern: CallPattern, prices: Any) -> None:
        self.calls_low = (self.calls_low or 0) + pattern.calls_low
        if self.calls_high is not None:
            self.calls_high = None if pattern.calls_high is None else self.calls_high + pattern.calls_high
        tokens = pattern.prompt_tokens
        if tokens is None:
            tokens = math.ceil(pattern.prompt_chars / CHARS_PER_TOKEN)
        self.input_tokens += tokens
        if pattern.tokenizer not in self.tokenizer.split(" + "):
            self.tokenizer = " + ".join(filter(None, [self.tokenizer, pattern.tokenizer]))
        if not pattern.calls_low and not pattern.calls_high:
            return  # no call for this sample
        out = None if pattern.output_tokens is None else pattern.output_tokens * pattern.calls_low
        self.output_tokens_max = None if out is None or self.output_tokens_max is None else self.output_tokens_max + out
        reasoning = pattern.reasoning_tokens * pattern.calls_low
        self.reasoning_tokens += reasoning
        if self.usd is not None and pattern.calls_low:
            from ...models import TokenUsage

            spent = TokenUsage(input_tokens=tokens, output_tokens=(out or 0) + reasoning, reasoning_tokens=reasoning)
            cost = prices.cost(spent, pattern.model or "")
            self.usd = None if cost is None else self.usd + cost
        self.shared = self.shared or pattern.shared
        if pattern.note and pattern.note not in self.note:
            self.note = pattern.note
        if out is None and pattern.calls_low and "no max_tokens" not in self.note:
            self.note = (self.note + "; " if self.note else "") + "no max_tokens: output unknown, USD input only"


#: The note of a row whose component has no model component anywhere: 0 calls, exact.
NO_MODEL = "calls no model"


def calls_no_model(rows: list[Row]) -> bool:
    """Whether no component of the estimate has a model anywhere (every row is a :data:`NO_MODEL` row)."""
    return all(row.note == NO_MODEL for row in rows)


def _calls_models(component: Any) -> bool:
    """Whether a resolved component (or one it names) is a model generator (an LLMGenerator: it has
    ``make_backend``)."""
    if component.info.kind == "generator" and callable(getattr(component.info.cls, "make_backend", None)):
        return True
    return any(_calls_models(part) for part in component.nested.values())


def estimate(plan: Any, stored: Any = None, cached: Any = None) -> list[Row]:
    """One :class:`Row` per (system, component) of ``plan`` (a :class:`~ragassay.engine.runner.RunPlan`).

    ``stored``: the :class:`~ragassay.engine.estimate.stored.StoredWork` of the run being resumed; what it holds
    costs nothing (counted in :attr:`Row.stored_calls` instead). ``cached``: what the response cache answers
    in full (:func:`ragassay.engine.estimate.cache.cache_pass`; counted in :attr:`Row.cached_calls`)."""
    from ...llm.pricing import PriceTable

    prices = PriceTable(plan.loaded.config.llm.prices)
    rows: list[Row] = []
    judges = [(f"judge:{label}", j) for label, j in plan.judges]
    scorers = [(f"metric:{label}", m) for label, m in plan.metrics] + judges
    for system in plan.systems:
        parts = [system.rag, *system.parts.values()]
        build = functools.partial(build_system_for_estimate, system, plan)
        rows.append(_row(system.name, "system", parts, build, plan, prices, (stored, cached)))
        for label, resolved in scorers:
            built = functools.partial(resolved.build, plan.context)
            rows.append(_row(system.name, label, [resolved], built, plan, prices, (stored, cached)))
    if plan.context.settings["llm"].get("cache"):
        _count_shared_once(rows)
    return rows


def _count_shared_once(rows: list[Row]) -> None:
    """With the response cache on, a component whose requests are identical to an earlier one's (the same
    :attr:`CallPattern.shared` key, the same system) is served from the cache or joins the call in flight:
    its calls cost nothing (e.g. ``relevance`` after ``truthfulness`` with the same options)."""
    first: dict[tuple[str, str], str] = {}
    for row in rows:
        if row.shared is None or row.calls_low is None:
            continue
        earlier = first.setdefault((row.system, row.shared), row.component)
        if earlier != row.component:
            row.calls_low = row.calls_high = row.input_tokens = row.output_tokens_max = 0
            row.usd = 0.0
            row.note = f"the same requests as {earlier}: served by the response cache"
            row.tokenizer = ""


def build_system_for_estimate(system: Any, plan: Any) -> Any:
    from ..systems import build_system

    return build_system(system, plan.context)


def _row(system: str, label: str, resolved: list[Any], build: Any, plan: Any, prices: Any, free: tuple) -> Row:
    row = Row(system, label)
    if not any(_calls_models(r) for r in resolved):
        row.note = NO_MODEL
        return row
    component = build()
    for sample in plan.samples:
        patterns = component.call_pattern(sample, _hints(sample, plan, system))
        patterns = patterns if isinstance(patterns, list) else [patterns]
        if any(p is None for p in patterns):
            name = type(component).__name__
            why = "does not declare call_pattern()" if patterns == [None] else "cannot tell for this sample"
            return Row(system, label, None, None, 0, None, None, f"unknown: {name} {why}")
        stored, cached = free
        if stored is not None and stored.has(system, label, sample.question_id):
            row.stored_calls += sum(p.calls_low for p in patterns)
            continue
        if cached is not None and cached.has(system, label, sample.question_id):
            row.cached_calls += sum(p.calls_low for p in patterns)
            continue
        row.samples += 1
        for pattern in patterns:
            row.add(pattern, prices)
    if row.cached_calls:
        row.note = f"{row.cached_calls} cache hits subtracted" + (f"; {row.note}" if row.note else "")
    if row.stored_calls:
        row.note = f"{row.stored_calls} stored calls subtracted" + (f"; {row.note}" if row.note else "")
    return row


def _hints(sample: Any, plan: Any, system_name: str) -> Hints:
    answer = max((len(a) for a in sample.reference_answers), default=0)
    system = next(s for s in plan.systems if s.name == system_name)
    if getattr(system.rag.info.cls, "retrieval", None) == "never":
        return Hints(answer_chars=answer, context_chars=0, contexts=0)
    top_k = getattr(system.rag.options, "top_k", None)
    chunker = system.parts.get("chunker")
    size = getattr(chunker.options, "size", None) if chunker is not None else None
    unit = getattr(chunker.options, "unit", "chars") if chunker is not None else None
    per_chunk = size * (CHARS_PER_TOKEN if unit == "tokens" else 1) if size else None
    context = top_k * per_chunk if top_k and per_chunk else None
    return Hints(answer_chars=answer, context_chars=context, contexts=top_k)


FIELDS = (
    "system",
    "component",
    "calls_low",
    "calls_high",
    "input_tokens",
    "output_tokens_max",
    "usd",
    "note",
    "stored_calls",
    "cached_calls",
    "samples",
    "piloted_calls",
    "piloted_tokens",
    "shared",
    "tokenizer",
    "reasoning_tokens",
)


def as_json(rows: Iterable[Row]) -> str:
    return json.dumps([dataclasses.asdict(r) for r in rows], indent=2)


def as_csv(rows: Iterable[Row]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow(dataclasses.asdict(row))
    return buffer.getvalue()


def as_markdown(rows: Iterable[Row]) -> str:
    lines = ["| system | component | calls | input tokens | output tokens (max) | USD | note |", "|---" * 7 + "|"]
    for r in rows:
        calls = _range(r.calls_low, r.calls_high)
        if r.piloted_calls is not None:
            calls += f" (piloted {r.piloted_calls})"
        out = "unknown" if r.output_tokens_max is None else str(r.output_tokens_max)
        usd = "unknown" if r.usd is None else f"{r.usd:.4f}"
        tokens = str(r.input_tokens) + (f" (piloted {r.piloted_tokens})" if r.piloted_tokens is not None else "")
        note = (
            r.note if r.tokenizer in ("", CHARS_RULE) else "; ".join(filter(None, [f"tokens: {r.tokenizer}", r.note]))
        )
        if r.reasoning_tokens:
            note = "; ".join(filter(None, [f"+{r.reasoning_tokens} reasoning tokens assumed", note]))
        lines.append(f"| {r.system} | {r.component} | {calls} | {tokens} | {out} | {usd} | {note} |")
    return "\n".join(lines) + "\n"


def summary_lines(rows: list[Row]) -> list[str]:
    """The estimate in a few lines of at most 80 columns, one per system (what ``ragassay run`` prints before it
    starts); no line when nothing calls a model."""
    stored = sum(r.stored_calls + r.cached_calls for r in rows)
    if not stored and not any(r.calls_low is None or r.calls_high != 0 for r in rows):
        return []
    rules = " + ".join(dict.fromkeys(t for r in rows for t in r.tokenizer.split(" + ") if t)) or CHARS_RULE
    lines = [f"estimate (before any call; tokens: {rules}; per component: ragassay estimate):"]
    for system in dict.fromkeys(r.system for r in rows):
        mine = [r for r in rows if r.system == system]
        unknown = any(r.calls_low is None for r in mine)
        low = sum(r.calls_low or 0 for r in mine)
        high = None if any(r.calls_high is None for r in mine) else sum(r.calls_high or 0 for r in mine)
        tokens = sum(r.input_tokens for r in mine)
        usd = None if any(r.usd is None for r in mine) else sum(r.usd or 0.0 for r in mine)
        cost = "USD unknown" if usd is None else f"${usd:.4f}"
        calls = _range(low, high) + (" + unknown" if unknown else "")
        lines.append(f"  {system}: {calls} calls, {_short(tokens)} input tokens, {cost}"[:80])
    return lines + footer_lines(rows)


def footer_lines(rows: list[Row]) -> list[str]:
    """What the estimate subtracted (stored work of the run being resumed, cache hits), in lines of at most
    80 columns."""
    stored, cached = sum(r.stored_calls for r in rows), sum(r.cached_calls for r in rows)
    lines = [f"  subtracted: {stored} calls already stored in the run being resumed"] if stored else []
    return lines + ([f"  subtracted: {cached} calls answered by the LLM response cache"] if cached else [])


def _short(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k" if n >= 1e4 else str(n)


def _range(low: int | None, high: int | None) -> str:
    if low is None:
        return "unknown"
    if high == low:
        return str(low)
    return f"{low}-{high}" if high is not None else f"{low}+"
