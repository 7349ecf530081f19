"""The work the agents metrics share per (sample, output) (plugins/agents/sharing.py): every metric scored in the
runner's order on the same objects gives the values and details it gives scored alone on fresh copies; equal but
distinct outputs, a replaced trajectory, and an evicted entry never reuse a result; threads scoring at once agree."""

from __future__ import annotations

import random
import threading

import pytest

from ragassay import Hop, RAGOutput, Sample, Step, ToolCall, Unscored
from ragassay.plugins.agents import blame, hops, sharing, trajectory

TOOLS = ["lookup", "search", "fetch"]

#: (metric class, options): the trajectory and hop metrics, with options that change what they share
METRICS = [
    (trajectory.ToolCorrectness, {}),
    (trajectory.ToolCorrectness, {"ordered": True}),
    (trajectory.ToolCorrectness, {"count_retrievals": True}),
    (trajectory.ArgumentCorrectness, {}),
    (trajectory.ArgumentCorrectness, {"args_mode": "subset"}),
    (trajectory.ArgumentCorrectness, {"args_overrides": {"lookup": ["item"]}}),
    (trajectory.TrajectoryMatch, {}),
    (trajectory.TrajectoryMatch, {"mode": "unordered"}),
    (trajectory.TrajectoryMatch, {"mode": "superset", "args_mode": "superset"}),
    (trajectory.TrajectoryMatch, {"parallel_batches": True}),
    (trajectory.StepEfficiency, {}),
    (trajectory.StepEfficiency, {"count_retrievals": True}),
    (trajectory.LoopFree, {}),
    (hops.HopRecall, {}),
    (hops.HopPrecision, {"k": 1}),
    (hops.HopMRR, {}),
    (hops.HopCoverage, {}),
    (blame.StepBlame, {}),
]


def _call(rng: random.Random) -> tuple[str, dict]:
    return rng.choice(TOOLS), {"item": rng.randrange(3), **({"hop": rng.randrange(2)} if rng.random() < 0.5 else {})}


def case(seed: int) -> tuple[Sample, RAGOutput]:
    """A sample with 1-3 hops and 0-3 expected calls, and an agent's output that finds, misses, repeats and errs
    at random (seeded)."""
    rng = random.Random(seed)
    hop_n = rng.randint(1, 3)
    gold = [[f"d{rng.randrange(8)}" for _ in range(rng.randint(1, 2))] for _ in range(hop_n)]
    expected = [ToolCall(name=n, arguments=a) for n, a in (_call(rng) for _ in range(rng.randint(0, 3)))]
    sample = Sample(
        question_id=f"q{seed}",
        question="Which value?",
        reference_answers=["value 7"],
        hops=[Hop(index=h + 1, description=f"A{h} -> B{h}", reference_context_ids=g) for h, g in enumerate(gold)],
        expected_tool_calls=expected,
    )
    steps = [Step(id="plan", kind="model_call", output="plan")]
    for n in range(rng.randint(0, 6)):
        if rng.random() < 0.5:
            ids = [f"d{rng.randrange(8)}" for _ in range(rng.randint(0, 3))]
            query = rng.choice(["which value", "Which  Value", "next"])
            steps.append(Step(id=f"r{n}", kind="retrieval", query=query, context_ids=ids, document_ids=ids[:1]))
        else:
            name, arguments = _call(rng)
            error = "timeout" if rng.random() < 0.1 else None
            steps.append(Step(id=f"t{n}", kind="tool_call", name=name, arguments=arguments, error=error))
    if rng.random() < 0.9:
        steps.append(Step(id="a", kind="answer", output=rng.choice(["It is value 7.", "No idea.", ""])))
    output = RAGOutput(answer="It is value 7.", contexts=["x"], context_ids=["d0"], trajectory=steps)
    return sample, output


def _metric(cls, options):
    return cls(cls.Options(**options))


def _plain(result) -> tuple:
    if isinstance(result, Unscored):
        return ("unscored", result.reason, result.details)
    return ("value", result.value, result.details)


def _unit_order(metrics, pairs) -> list[list[tuple]]:
    return [[_plain(m.score(sample, output)) for m in metrics] for sample, output in pairs]


def test_shared_values_equal_each_metric_scored_alone():
    sharing.clear()
    metrics = [_metric(cls, options) for cls, options in METRICS]
    pairs = [case(seed) for seed in range(60)]
    together = _unit_order(metrics, pairs)
    for s, (sample, output) in enumerate(pairs):
        for m, metric in enumerate(metrics):
            sharing.clear()
            alone = _plain(metric.score(sample.model_copy(deep=True), output.model_copy(deep=True)))
            assert together[s][m] == alone, (s, METRICS[m])
    kinds = {row[0] for unit in together for row in unit}
    assert kinds == {"value", "unscored"}  # the cases reach both outcomes


def test_equal_but_distinct_outputs_never_share():
    sharing.clear()
    sample, output = case(3)
    twin = output.model_copy(deep=True)
    calls: list[RAGOutput] = []

    def compute_for(which):
        return lambda: calls.append(which) or len(calls)

    assert sharing.shared("t", None, sample, output, compute_for(output)) == 1
    assert sharing.shared("t", None, sample, output, compute_for(output)) == 1  # the same objects: reused
    assert sharing.shared("t", None, sample, twin, compute_for(twin)) == 2  # equal, not the same: computed
    assert sharing.shared("t", None, sample.model_copy(), output, compute_for(output)) == 3
    assert sharing.shared("t", 1, sample, output, compute_for(output)) == 4  # other parameters
    output.trajectory = list(output.trajectory)  # a replaced list is a new question
    assert sharing.shared("t", None, sample, output, compute_for(output)) == 5
    assert calls[1] is twin


def test_a_changed_output_is_scored_afresh():
    sharing.clear()
    sample, output = case(5)
    output.trajectory = [Step(id="r", kind="retrieval", context_ids=sample.hops[0].reference_context_ids)]
    before = hops.HopRecall(hops.HopOptions()).score(sample, output)
    output.trajectory = [Step(id="r", kind="retrieval", context_ids=["nothing"])]
    after = hops.HopRecall(hops.HopOptions()).score(sample, output)
    assert before.details["hops"][0]["found"] and not after.details["hops"][0]["found"]


def test_the_memo_is_bounded():
    sharing.clear()
    pairs = [case(seed) for seed in range(sharing.MAX_ENTRIES + 5)]
    for sample, output in pairs:
        sharing.shared("t", None, sample, output, lambda: 0)
    assert len(sharing._entries) == sharing.MAX_ENTRIES
    computed = []
    sharing.shared("t", None, *pairs[0], lambda: computed.append(1))  # the oldest was dropped
    assert computed == [1]


@pytest.mark.parametrize("threads", [4])
def test_threads_scoring_at_once_agree_with_one_thread(threads):
    metrics = [_metric(cls, options) for cls, options in METRICS]
    pairs = [case(seed) for seed in range(40)]
    sharing.clear()
    expected = _unit_order(metrics, pairs)
    sharing.clear()
    found: dict[int, list] = {}
    barrier = threading.Barrier(threads)

    def work(t: int) -> None:
        barrier.wait()
        found[t] = _unit_order(metrics, pairs)  # every thread scores the same objects, racing for the memo

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(found[t] == expected for t in range(threads))
