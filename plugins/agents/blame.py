"""``step_blame``: the step at which an agent's trajectory went wrong, decided exactly from the per-hop gold (issue 40,
"Step-level blame ... for GRAMMAR samples it is decided exactly from the per-hop gold").

The rule, on the output's trajectory (an output without one reads as one retrieval step with its contexts, then
an answer step with its answer; their step ids and positions are null):

1. the hops are matched with the retrieval steps as the per-hop metrics do (:mod:`ragassay.plugins.agents.hops`);
   the first hop whose gold no retrieval step found is a ``missed_hop``, blamed at the retrieval step that should
   have found it: the k-th retrieval step for hop k, or the last retrieval step when the trajectory has fewer
   retrievals than hops (the reason says so); with no retrieval step at all the step is null;
2. the first ``tool_call`` or ``retrieval`` step that ended with an error is a ``tool_error``;
   of 1 and 2 the one at the earlier step is blamed (a missed hop without a step counts as after every step; at
   the same step the error is blamed, as the cause);
3. else ``no_answer`` when the trajectory has no ``answer`` step, or its answer is blank (the answer step's output,
   else ``RAGOutput.answer``), at that answer step or null;
4. else ``unsupported_answer`` at the answer step when the answer lacks the reference answer: the ``contains_answer``
   test (SQuAD-normalised whole-token containment, some reference answer), and for a ``grammar_chains`` turn every
   row of its exact answer (as ``turn_blame``);
5. else ``ok``.

Value 1.0 for ``ok`` and 0.0 for every blame; details ``{"blame", "step", "step_index", "kind", "hop", "reason"}``
(docs/metrics.md). Unscored on a sample without hops (the judge variant ``step_blame_judge`` is for those), a hop
without gold, or a sample without a usable reference answer.
"""

from __future__ import annotations

import dataclasses

from ragassay import Metric, MetricResult, RAGOutput, Sample, ScoringUnit, Step, Unscored, answer_tokens, hookimpl
from ragassay.plugins.lexical_metrics import contains_tokens, usable_references

from .hops import HopMatch, sample_hops, unit_matches

BLAMES = ("ok", "missed_hop", "tool_error", "no_answer", "unsupported_answer")


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Where the trajectory went wrong: the blame, the step (its id, 0-based position, kind), the hop, why."""

    blame: str
    reason: str
    step: str | None = None
    step_index: int | None = None
    kind: str | None = None
    hop: int | None = None

    def result(self) -> MetricResult:
        """The metric's value (1 only for ok) with the details of docs/metrics.md."""
        details = {
            "blame": self.blame,
            "step": self.step,
            "step_index": self.step_index,
            "kind": self.kind,
            "hop": self.hop,
            "reason": self.reason,
        }
        return MetricResult(value=1.0 if self.blame == "ok" else 0.0, details=details)


def _at(blame: str, reason: str, steps: list[Step], index: int | None, hop: int | None = None, kind=None) -> Verdict:
    """A verdict at ``steps[index]``; with no index (no such step, or no trajectory), at no step of kind ``kind``."""
    if index is None:
        return Verdict(blame, reason, None, None, kind, hop)
    return Verdict(blame, reason, steps[index].id, index, steps[index].kind, hop)


def missed_hop(sample: Sample, output: RAGOutput, matches: list[HopMatch]) -> Verdict | None:
    """The first hop no retrieval found, blamed at the retrieval step that should have found it."""
    missed = next((m for m in matches if not m.found), None)
    if missed is None:
        return None
    hop = f"hop {missed.index} ({missed.description})" if missed.description else f"hop {missed.index}"
    positions = [i for i, s in enumerate(output.trajectory) if s.kind == "retrieval"]
    if not output.trajectory:
        reason = f"the retrieved contexts lack every gold document of {hop}"
        return _at("missed_hop", reason, [], None, missed.index, kind="retrieval")
    if not positions:
        reason = f"the trajectory has no retrieval step, so {hop} was never retrieved"
        return _at("missed_hop", reason, [], None, missed.index)
    k = missed.index
    if k <= len(positions):
        reason = f"retrieval step {k} (for {hop}) and every other retrieval missed the hop's gold"
        return _at("missed_hop", reason, output.trajectory, positions[k - 1], k)
    reason = (
        f"no retrieval found the gold of {hop}; the trajectory has {len(positions)} retrieval step(s) for "
        f"{len(sample.hops)} hops, so the last retrieval is blamed"
    )
    return _at("missed_hop", reason, output.trajectory, positions[-1], k)


def tool_error(output: RAGOutput) -> Verdict | None:
    """The first tool call or retrieval that ended with an error."""
    for index, step in enumerate(output.trajectory):
        if step.kind in ("tool_call", "retrieval") and step.error:
            what = f"tool {step.name!r}" if step.name else f"a {step.kind.replace('_', ' ')}"
            return _at("tool_error", f"{what} ended with an error: {step.error}", output.trajectory, index)
    return None


def answer_verdict(sample: Sample, output: RAGOutput, references: list[str]) -> Verdict:
    """no_answer, unsupported_answer or ok, from the answer step (or the output's answer without a trajectory)."""
    steps = output.trajectory
    answers = [i for i, s in enumerate(steps) if s.kind == "answer"]
    if steps and not answers:
        return _at("no_answer", "the trajectory has no answer step", steps, None)
    index = answers[-1] if answers else None
    text = steps[index].output if index is not None and steps[index].output is not None else output.answer
    tokens = answer_tokens(text)
    if not tokens:
        return _at("no_answer", "the answer is empty", steps, index, kind="answer")
    chain_rows = _rows(sample)
    rows, needs_all = chain_rows or references, bool(chain_rows)
    lacking = [r for r in rows if not contains_tokens(tokens, answer_tokens(r))]
    if (needs_all and lacking) or (not needs_all and len(lacking) == len(rows)):
        reason = f"every hop's gold was retrieved but the answer lacks the reference answer {lacking[0]!r}"
        return _at("unsupported_answer", reason, steps, index, kind="answer")
    return Verdict("ok", "every hop's gold was retrieved, no tool failed and the answer contains the reference answer")


def _rows(sample: Sample) -> list[str]:
    """The rows of a grammar_chains turn's exact answer (each must be in the answer), else none."""
    chain = (sample.metadata or {}).get("chain")
    rows = chain.get("rows") if isinstance(chain, dict) else None
    return [r for r in rows or [] if isinstance(r, str) and answer_tokens(r)]


def _earliest(first: Verdict | None, second: Verdict | None) -> Verdict | None:
    """Of a missed hop and a tool error, the one at the earlier step (the error on a tie)."""
    if first is None or second is None:
        return first or second
    place = [v.step_index if v.step_index is not None else float("inf") for v in (first, second)]
    return first if place[0] < place[1] else second


class StepBlame(Metric):
    """Exact step-level blame of an agent's trajectory from the per-hop gold: ok, missed_hop, tool_error, no_answer
    or unsupported_answer, at the step where it went wrong (issue 40; rule in this module's docstring).

    The retrieval comparison is that of the per-hop metrics (Manning et al. 2008 Sec. 8.3); the answer test is
    ``contains_answer`` (DPR ``has_answer``, Karpukhin et al. 2020, on SQuAD-normalised tokens).
    """

    name = "step_blame"
    requires = frozenset({"hops", "reference_answers", "answer"})
    direction = "higher"
    value_range = (0.0, 1.0)
    formula = (
        "1 if every hop's gold was retrieved, no tool failed and the answer contains the reference, else 0; blame = "
        "earlier of missed_hop (k-th retrieval for hop k) and tool_error | no_answer | unsupported_answer"
    )
    source = (
        "ragassay issue 40 (step-level blame from DB-exact per-hop gold); retrieval as hop_coverage (Manning et al. "
        "2008 Sec. 8.3); answer test as contains_answer (Karpukhin et al. 2020, DPR has_answer)"
    )

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        return self.score_unit(ScoringUnit(sample, output))

    def score_unit(self, unit: ScoringUnit) -> MetricResult | Unscored:
        """The verdict, with the hop matching of the per-hop metrics of the unit (:func:`.hops.unit_matches`)."""
        sample, output = unit.sample, unit.output
        problem = sample_hops(sample)
        if problem is not None:
            return problem
        references = usable_references(sample)
        if isinstance(references, Unscored):
            return Unscored(reason=f"{references.reason}: an answer cannot be told supported")
        matches = unit_matches(unit)
        if isinstance(matches, Unscored):
            return matches
        verdict = _earliest(missed_hop(sample, output, matches), tool_error(output))
        return (verdict or answer_verdict(sample, output, references)).result()


@hookimpl
def register_metrics(register):
    """Register step_blame."""
    register(StepBlame)
