"""Per-hop retrieval metrics: ``hop_recall``, ``hop_precision``, ``hop_mrr`` and ``hop_coverage`` (issue 40).

A multi-hop sample carries the gold documents of each hop (:attr:`ragassay.Sample.hops`; the ``grammar`` source
derives them exactly from a join template's SQL, docs/grammar.md "Per-hop gold"). An agent's output carries its
retrievals as steps of kind ``retrieval`` in :attr:`ragassay.RAGOutput.trajectory` (in trajectory order, nested
agents' included); an output without a trajectory counts its contexts as one retrieval step (``context_ids`` with
``context_document_ids``), whose step id is null.

Each hop is compared with every retrieval step, as the retrieval metrics compare a ranking with the references
(docs/metrics.md, ``recall_at_k``, ``precision_at_k``, ``context_mrr``): a retrieved position is relevant when its
context id or its document id is one of the hop's gold ids. For one step and one hop (first ``k`` positions):

- recall = |distinct gold ids retrieved| / |distinct gold ids| (Manning, Raghavan & Schuetze 2008, Introduction to
  Information Retrieval, Sec. 8.3, Eq. 8.2);
- precision = relevant positions / positions retrieved (ibid., Eq. 8.1; 0 when the step retrieved nothing);
- rr = 1 / rank of the first relevant position, 0 when none (Voorhees 1999, TREC-8 QA track report).

A hop's *best* step is the one with the highest (recall, rr, precision), the earliest on ties; the hop is *found*
when some step retrieved at least one of its gold ids (recall > 0), else its values are 0 and its step null.
``hop_recall``, ``hop_precision`` and ``hop_mrr`` are the mean over hops of the best step's recall, precision and
rr; ``hop_coverage`` the share of hops found. Every one stores ``details["hops"]`` (per hop: index, description,
gold, found, recall, precision, rr, step) and ``details["first_failed_hop"]`` (the first hop not found, or null).

Unscored: a sample without hops (a single-hop question); a hop without gold ids; an output without a trajectory
that did not retrieve (``retrieved`` False) or has contexts without ids.
"""

from __future__ import annotations

from itertools import zip_longest
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from ragassay import Metric, MetricResult, RAGOutput, Sample, ScoringUnit, Unscored, hookimpl, reciprocal_rank
from ragassay.plugins.ir_metrics import CutOff

SOURCE = (
    "ragassay issue 40 (per-hop retrieval against DB-exact gold); per step: Manning et al. 2008, Introduction to IR, "
    "Sec. 8.3 (recall, precision); Voorhees 1999, TREC-8 QA track (reciprocal rank)"
)


class HopOptions(BaseModel):
    """Options of the per-hop retrieval metrics."""

    model_config = ConfigDict(extra="forbid")

    k: CutOff = Field(None, description="Read the first k positions of each retrieval step ('all' or None: all).")


class Retrieval(NamedTuple):
    """One retrieval step as the hop metrics read it: its id (None for a non-agent output's contexts), its
    position in the trajectory, for each retrieved position the ids that name it (context and document), and
    every id the step retrieved (the union of ``ranked``). Built by :func:`retrieval`."""

    step_id: str | None
    index: int | None
    ranked: tuple[frozenset[str], ...]
    ids: frozenset[str]


def retrieval(step_id: str | None, index: int | None, ranked: tuple[frozenset[str], ...]) -> Retrieval:
    """The :class:`Retrieval` of a step with these ranked positions."""
    return Retrieval(step_id, index, ranked, frozenset().union(*ranked))


class HopMatch(NamedTuple):
    """How well the retrievals served one hop: the best step's recall, precision and rr."""

    index: int
    description: str
    gold: tuple[str, ...]
    found: bool
    recall: float
    precision: float
    rr: float
    step: str | None
    step_index: int | None

    def details(self) -> dict:
        """The entry of ``details["hops"]`` (docs/metrics.md)."""
        return {
            "index": self.index,
            "description": self.description,
            "gold": list(self.gold),
            "found": self.found,
            "recall": self.recall,
            "precision": self.precision,
            "rr": self.rr,
            "step": self.step,
        }


_NO_IDS: frozenset[str] = frozenset()


def _positions(context_ids: list[str], document_ids: list[str], k: int | None) -> tuple[frozenset[str], ...]:
    """For each of the first ``k`` positions, the ids that name it: its context id and its document id (either
    may be missing)."""
    if k is not None:
        context_ids, document_ids = context_ids[:k], document_ids[:k]
    if not document_ids or document_ids == context_ids:  # one id names each position
        return tuple([frozenset((c,)) if c else _NO_IDS for c in context_ids])
    pairs = (
        zip(context_ids, document_ids)
        if len(context_ids) == len(document_ids)
        else zip_longest(context_ids, document_ids)
    )
    return tuple([frozenset((c, d)) if c and d else frozenset((c or d,)) if c or d else _NO_IDS for c, d in pairs])


def retrievals(output: RAGOutput, k: int | None = None) -> list[Retrieval] | Unscored:
    """The retrieval steps of an output (see the module docstring), or why they cannot be read."""
    if output.trajectory:
        return [
            retrieval(step.id, i, _positions(step.context_ids, step.document_ids, k))
            for i, step in enumerate(output.trajectory)
            if step.kind == "retrieval"
        ]
    if output.retrieved is False:
        return Unscored(reason="system did not retrieve (retrieved=False) and has no trajectory")
    if output.contexts and not output.context_ids:
        return Unscored(reason="output has contexts but no context_ids to match against the hops' gold")
    return [retrieval(None, None, _positions(output.context_ids, output.context_document_ids, k))]


def sample_hops(sample: Sample) -> Unscored | None:
    """Why the sample's hops cannot be scored, or None when they can."""
    if not sample.hops:
        return Unscored(
            reason="the sample has no per-hop gold (Sample.hops): a single-hop question, or a dataset without it "
            "(the grammar source gives join templates per-hop gold, docs/grammar.md)"
        )
    empty = next((h for h in sample.hops if not any(h.reference_context_ids)), None)
    if empty is not None:
        return Unscored(
            reason=f"hop {empty.index} ({empty.description or 'no description'}) has no gold ids "
            "(the documents mapping names no document for its rows)"
        )
    return None


def _scores(gold: frozenset[str], step: Retrieval) -> tuple[float, float, float]:
    hits = [not ids.isdisjoint(gold) for ids in step.ranked]
    recall = len(step.ids & gold) / len(gold)
    precision = sum(hits) / len(hits) if hits else 0.0
    return recall, precision, reciprocal_rank(hits)


def match_hops(sample: Sample, steps: list[Retrieval]) -> list[HopMatch]:
    """Each hop of ``sample`` (with gold) against the retrieval steps: its best step and that step's scores."""
    matches = []
    for hop in sample.hops:
        gold = tuple(dict.fromkeys(filter(None, hop.reference_context_ids)))
        wanted = frozenset(gold)
        best, best_key = None, (0.0, 0.0, 0.0)
        for step in steps:
            if step.ids.isdisjoint(wanted):
                continue  # recall 0: never a hop's best step
            recall, precision, rr = _scores(wanted, step)
            if (recall, rr, precision) > best_key:
                best, best_key = step, (recall, rr, precision)
        recall, rr, precision = best_key
        matches.append(
            HopMatch(
                hop.index,
                hop.description,
                gold,
                best is not None,
                recall,
                precision,
                rr,
                best.step_id if best else None,
                best.index if best else None,
            )
        )
    return matches


def output_matches(sample: Sample, output: RAGOutput, k: int | None = None) -> list[HopMatch] | Unscored:
    """``match_hops`` of the output's retrievals (first ``k`` positions), or why they cannot be read."""
    steps = retrievals(output, k)
    return steps if isinstance(steps, Unscored) else match_hops(sample, steps)


def unit_matches(unit: ScoringUnit, k: int | None = None) -> list[HopMatch] | Unscored:
    """:func:`output_matches` of the unit's sample and output, computed once per unit and ``k`` for every metric
    that asks (the hop metrics and ``step_blame``); the list is read only."""
    return unit.shared(("hops", "matches", k), lambda: output_matches(unit.sample, unit.output, k))


def hop_details(matches: list[HopMatch]) -> dict:
    """``details`` shared by the per-hop metrics: the hops and the first hop no retrieval found."""
    first = next((m.index for m in matches if not m.found), None)
    return {"hops": [m.details() for m in matches], "first_failed_hop": first}


class _HopMetric(Metric):
    """Shared scoring of the per-hop metrics: match the hops, then aggregate (see the module docstring)."""

    uses_answer = False  # the retrievals and the per-hop gold only
    requires = frozenset({"hops"})
    direction = "higher"
    value_range = (0.0, 1.0)
    Options = HopOptions
    source = SOURCE

    def score(self, sample: Sample, output: RAGOutput) -> MetricResult | Unscored:
        return self.score_unit(ScoringUnit(sample, output))

    def score_unit(self, unit: ScoringUnit) -> MetricResult | Unscored:
        """The value, with the hop matching shared by the unit's metrics (:func:`unit_matches`)."""
        problem = sample_hops(unit.sample)
        if problem is not None:
            return problem
        matches = unit_matches(unit, self.options.k)
        if isinstance(matches, Unscored):
            return matches
        return MetricResult(value=self.aggregate(matches), details=hop_details(matches))

    def aggregate(self, matches: list[HopMatch]) -> float:
        raise NotImplementedError


class HopRecall(_HopMetric):
    """Per-hop recall: mean over hops of the best retrieval step's recall of the hop's gold ids (issue 40;
    Manning et al. 2008, Sec. 8.3, Eq. 8.2, per step)."""

    name = "hop_recall"
    formula = "mean_h max_s |gold_h ∩ ids(s)| / |gold_h|  (s: retrieval steps, best by (recall, rr, precision))"

    def aggregate(self, matches: list[HopMatch]) -> float:
        return sum(m.recall for m in matches) / len(matches)


class HopPrecision(_HopMetric):
    """Per-hop precision: mean over hops of the best retrieval step's precision against the hop's gold (issue 40;
    Manning et al. 2008, Sec. 8.3, Eq. 8.1, per step); a hop no step found counts 0."""

    name = "hop_precision"
    formula = "mean_h |{i : id_i(s*_h) ∈ gold_h}| / |s*_h|  (s*_h: the hop's best retrieval step; 0 if not found)"

    def aggregate(self, matches: list[HopMatch]) -> float:
        return sum(m.precision for m in matches) / len(matches)


class HopMRR(_HopMetric):
    """Per-hop MRR: mean over hops of the best retrieval step's reciprocal rank of the hop's first gold id (issue
    40; Voorhees 1999, TREC-8 QA track, reciprocal rank per step)."""

    name = "hop_mrr"
    formula = "mean_h 1 / min{i : id_i(s*_h) ∈ gold_h}  (0 if no step found the hop)"

    def aggregate(self, matches: list[HopMatch]) -> float:
        return sum(m.rr for m in matches) / len(matches)


class HopCoverage(_HopMetric):
    """Hop coverage: the share of hops whose gold some retrieval step found (at least one gold id retrieved), issue
    40 ("did some retrieval find each hop's gold"); ``details["first_failed_hop"]`` names the first hop missed."""

    name = "hop_coverage"
    formula = "|{h : ∃ s, gold_h ∩ ids(s) ≠ ∅}| / |hops|"

    def aggregate(self, matches: list[HopMatch]) -> float:
        return sum(m.found for m in matches) / len(matches)


@hookimpl
def register_metrics(register):
    """Register hop_recall, hop_precision, hop_mrr and hop_coverage."""
    for metric in (HopRecall, HopPrecision, HopMRR, HopCoverage):
        register(metric)
