"""One output's claims and checks, RAGChecker's layout: extraction of both texts, then every check, batched.

The calls for one output (``c_r`` response claims, ``c_g`` reference claims, ``k`` retrieved chunks, at most
``B = claims_per_call`` claims per call):

- 2 extraction calls (response, reference answer; none for an empty text);
- ``answer2response``: the response claims against the reference answer, ``ceil(c_r / B)`` calls;
- ``response2answer``: the reference claims against the response, ``ceil(c_g / B)`` calls;
- ``retrieved2response`` and ``retrieved2answer``: per chunk, the response claims and the reference claims in the
  same call (one target text, one list), ``k * ceil((c_r + c_g) / B)`` calls.

So ``2 + ceil(c_r/B) + ceil(c_g/B) + k * ceil((c_r + c_g)/B)`` calls, all issued at once (the judge model's
backend bounds the concurrency). RAGChecker makes ``2 + (1 + k) * (ceil(c_r/5) + ceil(c_g/5))``: it checks 5
claims per call and each claim list against each chunk separately.

A call that stays unusable after its re-asks leaves its part missing, with the reason: the parts it would have
filled are None and every metric that needs them is unscored (never a guessed label).
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .judging import Outcome
from .model import ClaimChecks

PARTS = ("answer2response", "response2answer", "retrieved2response", "retrieved2answer")


@dataclasses.dataclass
class Texts:
    """What is split and checked for one output."""

    question: str
    response: str
    reference: str | None  # the first reference answer; None when the sample has none
    chunks: list[str]
    chunk_ids: list[str]


@dataclasses.dataclass
class ClaimRun:
    """Claims, labels and explanations of one output, in RAGChecker's layout; None where a part is missing."""

    response_claims: list[Any] | None = None
    gt_answer_claims: list[Any] | None = None
    answer2response: list[str] | None = None
    response2answer: list[str] | None = None
    retrieved2response: list[list[str]] | None = None
    retrieved2answer: list[list[str]] | None = None
    chunk_ids: list[str] = dataclasses.field(default_factory=list)
    explanations: dict[str, Any] = dataclasses.field(default_factory=dict)
    missing: dict[str, str] = dataclasses.field(default_factory=dict)
    failures: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    calls: int = 0  # judge questions asked (re-asks and provider retries not included)
    _checks: Any = dataclasses.field(default=None, repr=False, compare=False)

    def checks(self) -> ClaimChecks:
        """The :class:`~.model.ClaimChecks` of this run, built once (claims not extracted are empty lists; the
        lists that check them are None and missing)."""
        if self._checks is None:
            fields = {part: getattr(self, part) for part in PARTS}
            claims = {"response_claims": self.response_claims or [], "gt_answer_claims": self.gt_answer_claims or []}
            self._checks = ClaimChecks(**claims, chunk_ids=self.chunk_ids, **fields)
        return self._checks


Extract = Callable[[str], Awaitable[Outcome]]
Check = Callable[[Sequence[Any], str], Awaitable[Outcome]]


def planned_calls(c_r: int, c_g: int, k: int, per_call: int, texts: int = 2) -> int:
    """Calls of :func:`run_checks` for ``c_r`` / ``c_g`` claims and ``k`` chunks (``texts`` extractions)."""
    return texts + math.ceil(c_r / per_call) + math.ceil(c_g / per_call) + k * math.ceil((c_r + c_g) / per_call)


def ragchecker_calls(c_r: int, c_g: int, k: int, per_call: int = 5) -> int:
    """RAGChecker's calls for the same output (joint checking of ``per_call`` claims, one list per call)."""
    return 2 + (1 + k) * (math.ceil(c_r / per_call) + math.ceil(c_g / per_call))


async def run_checks(
    texts: Texts, extract: Extract, check: Check, per_call: int, parts: set[str] = frozenset(PARTS)
) -> ClaimRun:
    """Extract the claims, then check them (see the module docstring); only the ``parts`` asked for, and the
    claims they need (a part not asked for is missing with the reason)."""
    run = ClaimRun(chunk_ids=list(texts.chunk_ids))
    want_response = bool(parts & {"answer2response", "retrieved2response"})
    want_reference = bool(parts & {"response2answer", "retrieved2answer"})
    response, reference = await asyncio.gather(
        _claims(run, "response", texts.response if want_response else None, extract),
        _claims(run, "reference answer", texts.reference if want_reference else None, extract),
    )
    run.response_claims, run.gt_answer_claims = response, reference
    jobs: list[Awaitable[None]] = []
    if "answer2response" in parts and response is not None and texts.reference is not None:
        jobs.append(_labels(run, "answer2response", response, texts.reference, check, per_call))
    if "response2answer" in parts and reference is not None:
        jobs.append(_labels(run, "response2answer", reference, texts.response, check, per_call))
    if parts & {"retrieved2response", "retrieved2answer"}:
        jobs.append(_chunks(run, texts, check, per_call, parts))
    await asyncio.gather(*jobs)
    for part in PARTS:
        if getattr(run, part) is None and part not in run.missing:
            needs = "response" if part in ("answer2response", "retrieved2response") else "reference"
            run.missing[part] = run.missing.get(needs) or (
                "the sample has no reference_answers" if texts.reference is None else "not asked for"
            )
    return run


async def _claims(run: ClaimRun, what: str, text: str | None, extract: Extract) -> list[Any] | None:
    key = "response" if what == "response" else "reference"
    if text is None:
        return None
    if not text.strip():
        return []  # nothing stated, nothing to ask
    run.calls += 1
    outcome = await extract(text)
    if not outcome.usable:
        run.missing[key] = f"claim extraction of the {what} not usable: {outcome.error}"
        run.failures.append({"call": f"extract {what}", "error": outcome.error, "raw": outcome.raw})
        return None
    run.explanations[f"{key}_claims"] = outcome.explanation
    return list(outcome.value)


async def _batched(run: ClaimRun, what: str, claims: Sequence[Any], target: str, check: Check, per_call: int):
    """Labels and explanations of ``claims`` against ``target``, ``per_call`` claims per call; None if any batch
    is unusable (the failure is recorded)."""
    batches = [claims[i : i + per_call] for i in range(0, len(claims), per_call)]
    run.calls += len(batches)
    outcomes = await asyncio.gather(*(check(batch, target) for batch in batches))
    for outcome in outcomes:
        if not outcome.usable:
            run.failures.append({"call": f"check {what}", "error": outcome.error, "raw": outcome.raw})
            return None, f"claim check ({what}) not usable: {outcome.error}"
    pairs = [pair for outcome in outcomes for pair in outcome.value]
    return pairs, None


async def _labels(run: ClaimRun, part: str, claims: list[Any], target: str, check: Check, per_call: int) -> None:
    pairs, error = await _batched(run, part, claims, target, check, per_call)
    if pairs is None:
        run.missing[part] = error
        return
    setattr(run, part, [label for label, _ in pairs])
    run.explanations[part] = [explanation for _, explanation in pairs]


async def _chunks(run: ClaimRun, texts: Texts, check: Check, per_call: int, parts: set[str]) -> None:
    """Both claim lists (those of the ``parts`` asked for) against each chunk, in one list per chunk."""
    response = run.response_claims if "retrieved2response" in parts else None
    reference = run.gt_answer_claims if "retrieved2answer" in parts else None
    together = (response or []) + (reference or [])
    per_chunk = await asyncio.gather(
        *(_batched(run, f"chunk {cid}", together, text, check, per_call) for cid, text in _chunk_pairs(texts))
    )
    failed = next((error for pairs, error in per_chunk if pairs is None), None)
    split = len(response or [])
    for part, claims, lo, hi in (
        ("retrieved2response", response, 0, split),
        ("retrieved2answer", reference, split, len(together)),
    ):
        if claims is None or part not in parts:
            continue  # the reason is given by run_checks
        if failed is not None:
            run.missing[part] = failed
        else:
            setattr(run, part, [[pairs[i][0] for pairs, _ in per_chunk] for i in range(lo, hi)])
            run.explanations[part] = [[pairs[i][1] for pairs, _ in per_chunk] for i in range(lo, hi)]


def _chunk_pairs(texts: Texts) -> list[tuple[str, str]]:
    return list(zip(texts.chunk_ids, texts.chunks))
