"""Agents: what storing and scoring trajectories costs per step.

The same run of ``--samples`` samples (default 1,000) with a system that answers at once (no model, no
retrieval; every trajectory is built before the run and frozen out of garbage collection, in every mode), in four
modes: (a) its outputs carry a trajectory of ``--steps`` steps (default 20: a plan call, then per hop a
retrieval, a tool call and a read call, and the answer), scored by the lexical metrics plus the trajectory metrics
(tool_correctness, argument_correctness, trajectory_match, step_efficiency, token_efficiency, loop_free, and the
per-hop hop_recall, hop_coverage and step_blame against the samples' hops); (b) the same outputs (answer,
contexts, usage) without a trajectory, scored by the lexical metrics only; (c) with trajectories, lexical metrics
only (what storing costs); (d) without trajectories, every metric listed (what the runner's per-value work costs).
Every run is a fresh process; the modes alternate (the order reversed every other round), ``--repeats`` times
(default 3), and the figures are the medians: the run's wall time (config load, dataset read, run loop, every
output and value stored), the run loop's time, the CPU time of the run (this process), the driver's peak RSS,
and the overhead share (a - b) / a of the run time, also per trajectory step; and, steadier on a busy machine,
the median of the round-by-round differences (the two runs of a round are adjacent) with their range. Such a run
is ragassay's own work only (the nine metrics' computation alone is about a fifth of the plain run): the goal of
issue 40, under 10% of the run time, is measured by the ``agent`` part, whose system does the work of an agent.

``agent`` (not part of the default): the same comparison for a system that does real work per step (nothing is
built before the run and nothing is frozen out of garbage collection: the processes run as ``ragassay run`` does). The
shipped ``decomposing_agent`` (Self-Ask: a decomposition call, one BM25 retrieval per hop over a corpus of
``--samples`` x hops one-sentence documents, a read call per hop whose answer the next follow-up question needs,
the answer call) calls a scripted OpenAI-compatible server on 127.0.0.1, in a process of its own, started afresh
for every run and stopped after it; the server answers at once (no sleep), following the prompts: it plans one
follow-up question per hop ("What is #n linked to?"), reads the intermediate answer from the sources, and
answers by following the chain through the sources. ``--steps`` 20 gives 9 hops: 1 + 9 + 8 + 1 model calls and
retrievals, and the answer step. Two modes, alternating as above: (e) the agent's outputs with their
trajectories, lexical + trajectory metrics (the call metrics count the retrievals as the calls, against the
sample's expected query per hop); (f) the same agent doing the same work, each output's trajectory dropped once
answered, lexical metrics only. Both store the outputs (answer, contexts, usage, trace), (e) also the trajectory
and the nine trajectory metrics' values.

``metrics`` (not part of the default): each trajectory metric's own ``score`` on the same 1,000 samples and
outputs in this process, without the runner or the store: microseconds per sample and the size of its details;
then all of them one sample after another, as the runner scores a unit (the hop matching and the compared calls
computed once per output, :class:`ragassay.ScoringUnit`).

    python benchmarks/agents.py [overhead|agent|metrics] [--samples 1000] [--steps 20] [--repeats 3]
        [--concurrency 8]
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ragassay import RAGOutput, RAGSystem, Step, TokenUsage, hookimpl

REPO = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
LEXICAL = ["token_recall", "token_f1", "k_precision", "exact_match", "contains_answer", "context_mrr", "recall_at_k"]
TRAJECTORY = [
    "tool_correctness",
    "argument_correctness",
    "trajectory_match",
    "step_efficiency",
    {"name": "token_efficiency", "options": {"budget": 4000}},
    "loop_free",
    "hop_recall",
    "hop_coverage",
    "step_blame",
]
PROMPT = (
    "Answer the question from the numbered sources below; cite them as [n]. If the sources do not say, answer "
    "that you do not know.\n\nSources:\n[1] {a}\n[2] {b}\n\nQuestion: {q}\nAnswer:"
)


def hops_of(steps: int) -> int:
    """Hops of a ``steps``-step trajectory: plan + 3 steps per hop + answer (20 steps: 6 hops)."""
    return max(1, (steps - 2) // 3)


def doc(i: int, hop: int) -> str:
    return f"doc{(i * 7 + hop) % 500}"


def text(i: int, hop: int) -> str:
    return f"Item number {i} at hop {hop} has value {(i * 7 + hop) % 1000}; see {doc(i, hop)}."


class AgentOptions(BaseModel):
    """Options of the benchmark's instant agent."""

    model_config = ConfigDict(extra="forbid")
    steps: int = Field(20, ge=1, description="Steps of each trajectory (it decides the hops and contexts too).")
    attach: bool = Field(True, description="Return the trajectory with the output; false: the same output without.")


#: sample index -> its trajectory, built before the run in both modes (prebuild), so that the system answers at
#: once and both modes hold the same objects in memory
PREBUILT: dict[int, list[Step]] = {}


def prebuild(samples: int, steps: int) -> None:
    """Build every sample's trajectory ahead of the run (the answer of sample i is the same as InstantAgent's)."""
    for i in range(samples):
        question = f"What is the value of item number {i} in the catalogue?"
        PREBUILT[i] = trajectory(question, i, steps, answer_of(i))


def answer_of(i: int) -> str:
    return f"The answer is value {i * 7 % 1000} as the source says [1]."


class InstantAgent(RAGSystem):
    """Answers at once with the sample's reference answer in a sentence and its hops' contexts; with ``steps``, a
    trajectory of that many steps: a plan call, per hop a retrieval (3 ranked ids, the hop's gold first), a tool
    call and a read call (usage and texts of a realistic size), padded with read calls, and the answer."""

    name = "agent"
    Options = AgentOptions

    async def answer(self, sample) -> RAGOutput:
        i = int(sample.question_id[1:])
        hops, answer = hops_of(self.options.steps), answer_of(i)
        contexts = [text(i, h) for h in range(1, hops + 1)]
        ids = [doc(i, h) for h in range(1, hops + 1)]
        usage = TokenUsage(input_tokens=180 * (1 + 2 * hops), output_tokens=20 * (1 + 2 * hops), calls=1 + 2 * hops)
        output = RAGOutput(answer=answer, contexts=contexts, context_ids=ids, retrieved=True, usage=usage)
        if self.options.attach:
            output.trajectory = PREBUILT.get(i) or trajectory(sample.question, i, self.options.steps, answer)
        return output


def trajectory(question: str, i: int, steps: int, answer: str) -> list[Step]:
    """The ``steps``-step trajectory of sample ``i`` (InstantAgent)."""
    usage = {"input_tokens": 180, "output_tokens": 20, "calls": 1}
    plan = {"kind": "model_call", "name": "bench/m", "input": question, "output": "Follow up: ...", "usage": usage}
    out = [plan]
    for h in range(1, hops_of(steps) + 1):
        ranked = [doc(i, h), doc(i + 1, h), doc(i + 2, h)]
        value = (i * 7 + h) % 1000
        prompt = PROMPT.format(a=text(i, h), b=text(i + 1, h), q=question)
        out += [
            {"kind": "retrieval", "name": "bm25", "query": f"{question} hop {h}", "context_ids": ranked,
             "document_ids": ranked, "scores": [3.2, 2.1, 1.4], "latency_s": 0.001},
            {"kind": "tool_call", "name": "lookup", "arguments": {"item": i, "hop": h}, "result": {"value": value}},
            {"kind": "model_call", "name": "bench/m", "input": prompt, "output": f"value {value}", "usage": usage},
        ]  # fmt: skip
    while len(out) < steps - 1:
        out.append({"kind": "model_call", "name": "bench/m", "input": question, "output": "reading", "usage": usage})
    out = out[: steps - 1] + [{"kind": "answer", "output": answer}]
    return [Step(id=f"s{n}", **fields) for n, fields in enumerate(out[-steps:], 1)]


class Plugin:
    @hookimpl
    def register_rags(self, register):
        from ragassay.reference_rags.agents import DecomposingAgentRAG

        class UntracedAgent(DecomposingAgentRAG):
            """decomposing_agent, each output returned without its trajectory (the ``agent`` part's mode (f))."""

            name = "decomposing_untraced"

            async def answer(self, sample):
                output = await super().answer(sample)
                output.trajectory = []
                return output

        register(InstantAgent)
        register(UntracedAgent)


def write_project(root: Path, samples: int, steps: int, mode: str, concurrency: int) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    hops = hops_of(steps)
    with open(root / "qa.jsonl", "w", encoding="utf-8") as handle:
        for i in range(samples):
            row = {
                "question_id": f"q{i}",
                "question": f"What is the value of item number {i} in the catalogue?",
                "reference_answers": [f"value {i * 7 % 1000}"],
                "reference_contexts": [text(i, 1)],
                "reference_context_ids": [doc(i, 1)],
                "expected_tool_calls": [
                    {"name": "lookup", "arguments": {"item": i, "hop": h}} for h in range(1, hops + 1)
                ],
                "hops": [
                    {"index": h, "description": f"hop {h}", "reference_context_ids": [doc(i, h)]}
                    for h in range(1, hops + 1)
                ],
            }  # fmt: skip
            handle.write(json.dumps(row) + "\n")
    metrics = LEXICAL + (TRAJECTORY if mode in ("trajectory", "unscored") else [])
    agent = {"name": "bench/agent", "options": {"steps": steps, "attach": mode in ("trajectory", "stored")}}
    config = root / "ragassay.toml"
    config.write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = {concurrency}
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [evaluation]
        metrics = {toml_list(metrics)}
        [systems.agent]
        rag = {toml_value(agent)}
    """)
    )
    return config


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def toml_list(values) -> str:
    return "[" + ", ".join(toml_value(v) for v in values) + "]"


def one_run(root: Path, samples: int, steps: int, kind: str) -> None:
    """Run the project at ``root`` in this process and print its figures as JSON (the child of each run)."""
    import resource
    import sqlite3

    import ragassay

    if kind == "instant":
        prebuild(samples, steps)
        gc.freeze()  # the prebuilt trajectories are never collected: keep them out of every mode's garbage collections
    start, cpu = time.perf_counter(), time.process_time()
    summary = ragassay.run(root / "ragassay.toml", plugins=[("bench", Plugin())], new=True)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert summary.failed == 0 and summary.completed > 0, summary.summary
    con = sqlite3.connect(root / "ragassay-results.db")
    values = con.execute("select count(*) from metric_values where value is not null").fetchone()[0]
    means = dict(con.execute("select metric, avg(value) from metric_values group by metric").fetchall())
    steps_stored = con.execute("select avg(json_array_length(output_json, '$.trajectory')) from outputs").fetchone()[0]
    con.close()
    figures = {"samples": summary.completed, "run_s": wall, "loop_s": summary.elapsed_s, "cpu_s": cpu, "values": values}
    figures.update(means={k: means.get(k) for k in ("contains_answer", "hop_coverage", "tool_correctness")})
    figures["steps"] = steps_stored or 0
    figures["rss_peak"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    print(json.dumps(figures))


def child(root: Path, samples: int, steps: int, kind: str = "instant") -> dict:
    command = [sys.executable, __file__, "_one", "--root", str(root), "--samples", str(samples), "--steps", str(steps)]
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-not-a-real-key"}
    done = subprocess.run([*command, "--kind", kind], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"run in {root} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def trajectory_bytes(steps: int) -> int:
    """Bytes of one stored trajectory (its JSON), for the printout."""
    steps_ = trajectory("What is the value of item number 500 in the catalogue?", 500, steps, "The answer is x.")
    return len(json.dumps([s.model_dump(mode="json", exclude_defaults=True) for s in steps_]))


MODES = {
    "trajectory": "(a) outputs with their trajectories, lexical + trajectory metrics",
    "stored": "(c) outputs with their trajectories, lexical metrics only (storing without scoring)",
    "plain": "(b) the same outputs without trajectories, lexical metrics",
    "unscored": "(d) the same outputs without trajectories, lexical + trajectory metrics (unscored; the hop metrics "
    "and step_blame read the contexts as one retrieval)",
}


def run_modes(args: argparse.Namespace, modes: list[str], one=None) -> dict[str, list[dict]]:
    """``args.repeats`` rounds of one fresh process per mode, the order reversed every other round; ``one(root,
    mode)`` makes one run (default: the instant agent's)."""
    one = one or (lambda root, mode: instant_run(root, args, mode))
    results: dict[str, list[dict]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory(prefix="ragassay-agents-") as tmp:
        for repeat in range(args.repeats):
            for mode in modes if repeat % 2 == 0 else list(reversed(modes)):
                r = one(Path(tmp) / f"{mode}-{repeat}", mode)
                assert r["samples"] == args.samples, r
                results[mode].append(r)
                print(f"   run {repeat + 1} {mode:<11} run {r['run_s']:6.2f} s, loop {r['loop_s']:6.2f} s, "
                      f"CPU {r['cpu_s']:6.2f} s, "
                      f"{r['values']:,} values, {r['steps']:.1f} steps stored per output, "
                      f"peak RSS {r['rss_peak'] / MIB:.0f} MiB", flush=True)  # fmt: skip
    return results


def instant_run(root: Path, args: argparse.Namespace, mode: str) -> dict:
    write_project(root, args.samples, args.steps, mode, args.concurrency)
    return child(root, args.samples, args.steps)


def medians(results: dict[str, list[dict]]) -> dict[str, dict[str, float]]:
    keys = ("run_s", "loop_s", "cpu_s", "rss_peak")
    return {m: {k: statistics.median(r[k] for r in rs) for k in keys} for m, rs in results.items()}


def share(med: dict, mode: str, base: str, key: str) -> str:
    extra = med[mode][key] - med[base][key]
    return f"{extra:+.2f} s = {extra / med[mode][key]:.1%}"


def paired(results: dict[str, list[dict]], mode: str, base: str, key: str = "run_s") -> str:
    """The round-by-round differences ``mode - base`` (the two runs of a round are adjacent): their median, as a
    share of ``mode``'s median, and their range; steadier than the difference of the medians on a busy machine."""
    extra = [a[key] - b[key] for a, b in zip(results[mode], results[base])]
    middle = statistics.median(extra)
    whole = statistics.median(r[key] for r in results[mode])
    return f"{middle:+.2f} s = {middle / whole:.1%} (rounds: {min(extra):+.2f} to {max(extra):+.2f} s)"


def metric_costs(args: argparse.Namespace) -> None:
    """Each trajectory metric's score() over the prebuilt outputs, in this process (no runner, no store)."""
    from ragassay import Sample, ScoringUnit
    from ragassay.plugins.agents import blame, hops, trajectory

    classes = {cls.name: cls for cls in [*trajectory.METRICS, hops.HopRecall, hops.HopCoverage, blame.StepBlame]}
    with tempfile.TemporaryDirectory(prefix="ragassay-agents-") as tmp:
        write_project(Path(tmp), args.samples, args.steps, "trajectory", args.concurrency)
        lines = (Path(tmp) / "qa.jsonl").read_text(encoding="utf-8").splitlines()
    samples = [Sample.model_validate_json(line) for line in lines]
    prebuild(args.samples, args.steps)
    hops_n = hops_of(args.steps)
    outputs = [
        RAGOutput(answer=answer_of(i), contexts=[text(i, h) for h in range(1, hops_n + 1)],
                  context_ids=[doc(i, h) for h in range(1, hops_n + 1)], retrieved=True, trajectory=PREBUILT[i])
        for i in range(args.samples)
    ]  # fmt: skip
    gc.freeze()
    print(f"== each trajectory metric's score() on {args.samples:,} samples, {args.steps}-step trajectories")
    metrics = []
    for entry in TRAJECTORY:
        name, options = (entry, {}) if isinstance(entry, str) else (entry["name"], entry["options"])
        metric = classes[name](classes[name].Options(**options))
        metrics.append(metric)
        start = time.perf_counter()
        results = [metric.score(sample, output) for sample, output in zip(samples, outputs)]
        elapsed = time.perf_counter() - start
        details = statistics.mean(len(json.dumps(getattr(r, "details", None) or {})) for r in results)
        print(f"   {name:<22} {elapsed / args.samples * 1e6:7.1f} us per sample, details {details:,.0f} bytes")
    start = time.perf_counter()
    for sample, output in zip(samples, outputs):  # as the runner scores a unit: the shared work is done once
        unit = ScoringUnit(sample, output)
        for metric in metrics:
            metric.score_unit(unit) if hasattr(metric, "score_unit") else metric.score(sample, output)
    elapsed = time.perf_counter() - start
    print(f"   {'all, sample by sample':<22} {elapsed / args.samples * 1e6:7.1f} us per sample (as the runner scores)")


# -- the agent part: decomposing_agent at a scripted model over HTTP --------------------------------------------

AGENT_MODES = {
    "agent": "(e) decomposing_agent over HTTP, outputs with their trajectories, lexical + trajectory metrics",
    "agent_plain": "(f) the same agent doing the same work, each output's trajectory dropped once answered, "
    "lexical metrics",
}
#: the trajectory metrics of mode (e): those of the instant agent, the call metrics counting this agent's tools,
#: its retrievals, as its calls (against the sample's expected query per hop)
CALL_METRICS = ("tool_correctness", "argument_correctness", "trajectory_match", "step_efficiency")
AGENT_TRAJECTORY = [
    {"name": m, "options": {"count_retrievals": True}} if m in CALL_METRICS else m
    for m in TRAJECTORY
]  # fmt: skip
_LINK = re.compile(r"^\[(\d+)\] Item (\w+) is linked to (\w+)\.", re.M)


def links_of(steps: int) -> int:
    """Hops of the agent's ``steps``-step trajectory: a decomposition call, per hop a retrieval and (but the last)
    a read call, the answer call and the answer step (20 steps: 9 hops)."""
    return max(1, (steps - 2) // 2)


def item(i: int, hop: int) -> str:
    return f"item{i}n{hop}"


def item_doc(i: int, hop: int) -> str:
    """The document that states hop ``hop`` of sample ``i``: item(i, hop) is linked to item(i, hop + 1)."""
    return f"corpus/i{i:05d}h{hop:02d}.md"


def follow_up(subject: str) -> str:
    return f"What is {subject} linked to?"


def write_agent_project(root: Path, args: argparse.Namespace, mode: str, url: str) -> None:
    """The corpus (one sentence per hop of every sample), the questions with their per-hop gold and expected
    queries, and the config of ``mode``, the agent's model at ``url``."""
    hops = links_of(args.steps)
    (root / "corpus").mkdir(parents=True)
    with open(root / "qa.jsonl", "w", encoding="utf-8") as handle:
        for i in range(args.samples):
            for h in range(1, hops + 1):
                sentence = f"Item {item(i, h)} is linked to {item(i, h + 1)}. It is entry {h} of catalogue {i}.\n"
                (root / item_doc(i, h)).write_text(sentence, encoding="utf-8")
            row = {
                "question_id": f"q{i}",
                "question": f"Which item is reached from {item(i, 1)} after {hops} links?",
                "reference_answers": [item(i, hops + 1)],
                "reference_context_ids": [item_doc(i, h) for h in range(1, hops + 1)],
                "expected_tool_calls": [
                    {"name": "bm25", "arguments": {"query": follow_up(item(i, h))}} for h in range(1, hops + 1)
                ],
                "hops": [
                    {"index": h, "description": f"link {h}", "reference_context_ids": [item_doc(i, h)]}
                    for h in range(1, hops + 1)
                ],
            }  # fmt: skip
            handle.write(json.dumps(row) + "\n")
    metrics = LEXICAL + (AGENT_TRAJECTORY if mode == "agent" else [])
    rag = "decomposing_agent" if mode == "agent" else "bench/decomposing_untraced"
    generator = {"name": "openai", "options": {"model": "bench-model", "base_url": f"{url}/v1"}}
    generator["options"]["concurrency"] = args.concurrency
    (root / "ragassay.toml").write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = {args.concurrency}
        [corpus]
        paths = ["corpus/*.md"]
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [llm]
        cache = false
        [defaults]
        retriever = "bm25"
        generator = {toml_value(generator)}
        [evaluation]
        metrics = {toml_list(metrics)}
        [systems.agent]
        rag = "{rag}"
        options = {{ top_k = 3, max_hops = {hops} }}
    """)
    )


def scripted_reply(prompt: str) -> str:
    """The scripted model's reply to the agent's last user message: a decomposition into one follow-up question
    per link, an intermediate answer read from the sources, or the answer found by following the links through the
    sources (with its source cited)."""
    question = re.findall(r"^Question: (.+)$", prompt, re.M)
    if prompt.rstrip().endswith("Are follow up questions needed here:"):
        start, count = re.match(r"Which item is reached from (\w+) after (\d+) links\?", question[-1]).groups()
        plan = [follow_up(start)] + [follow_up(f"#{h}") for h in range(1, int(count))]
        return " Yes.\n" + "\n".join(f"Follow up: {q}" for q in plan)
    links = {subject: (target, number) for number, subject, target in _LINK.findall(prompt)}
    if prompt.rstrip().endswith("Intermediate answer:"):
        subject = re.findall(r"^Follow up: What is (\w+) linked to\?$", prompt, re.M)[-1]
        return links[subject][0] if subject in links else "unknown"
    start, count = re.match(r"Which item is reached from (\w+) after (\d+) links\?", question[-1]).groups()
    current, cited = start, []
    for _ in range(int(count)):
        if current not in links:
            return "I don't know."
        current, number = links[current]
        cited.append(number)
    return f"{current} [{cited[-1]}]."


def serve_agent_model(ready, stop) -> None:
    """Child process: the scripted model (:func:`scripted_reply`) on 127.0.0.1 until ``stop`` is set."""
    sys.path.insert(0, str(REPO / "tests"))
    from servers.openai_chat import OpenAIChatServer, Turn

    def reply(request):
        return Turn(text=scripted_reply(OpenAIChatServer.last_user_text(request)))

    with OpenAIChatServer(default=reply) as server:
        ready.put(server.url)
        stop.wait()


def agent_run(root: Path, args: argparse.Namespace, mode: str) -> dict:
    """One run of ``mode`` against a fresh scripted model process, stopped when the run ends."""
    ready, stop = multiprocessing.Queue(), multiprocessing.Event()
    server = multiprocessing.Process(target=serve_agent_model, args=(ready, stop), daemon=True)
    server.start()
    try:
        write_agent_project(root, args, mode, ready.get(timeout=60))
        return child(root, args.samples, args.steps, kind="agent")
    finally:
        stop.set()
        server.join(timeout=30)


def agent_part(args: argparse.Namespace) -> None:
    hops = links_of(args.steps)
    print(f"== {args.samples:,} samples, decomposing_agent at a scripted model on 127.0.0.1 (its own process, no "
          f"sleep), {hops} hops: {2 * hops + 2}-step trajectories; {args.repeats} alternating runs of each mode, "
          "fresh processes")  # fmt: skip
    for mode, what in AGENT_MODES.items():
        print(f"   {mode}: {what}")
    print(f"   lexical: {', '.join(LEXICAL)}")
    print(f"   trajectory: {', '.join(m if isinstance(m, str) else m['name'] for m in AGENT_TRAJECTORY)} (the call "
          "metrics with count_retrievals)")  # fmt: skip
    results = run_modes(args, list(AGENT_MODES), lambda root, mode: agent_run(root, args, mode))
    med = medians(results)
    for mode in AGENT_MODES:
        means = results[mode][0]["means"]
        quality = ", ".join(f"{k} {v:.3f}" for k, v in means.items() if v is not None)
        print(f"median {mode:<11}: run {med[mode]['run_s']:.2f} s, loop {med[mode]['loop_s']:.2f} s, CPU "
              f"{med[mode]['cpu_s']:.2f} s, peak RSS {med[mode]['rss_peak'] / MIB:.0f} MiB; "
              f"means: {quality}")  # fmt: skip
    print(f"paired by round (e - f): run time {paired(results, 'agent', 'agent_plain')}, CPU time "
          f"{paired(results, 'agent', 'agent_plain', 'cpu_s')}")  # fmt: skip
    steps = statistics.median(r["steps"] for r in results["agent"])
    per_step = (med["agent"]["run_s"] - med["agent_plain"]["run_s"]) / (args.samples * steps)
    print(f"storing and scoring trajectories (e - f): {share(med, 'agent', 'agent_plain', 'run_s')} of the run time "
          f"(goal: under 10%), {share(med, 'agent', 'agent_plain', 'loop_s')} of the run loop, "
          f"{share(med, 'agent', 'agent_plain', 'cpu_s')} of the run's CPU time (the model's process not counted); "
          f"{per_step * 1e6:.1f} us per step")  # fmt: skip


def instant_part(args: argparse.Namespace) -> None:
    print(f"== {args.samples:,} samples, an instant agent, trajectories of {args.steps} steps (about "
          f"{trajectory_bytes(args.steps):,} bytes of JSON each); {args.repeats} alternating runs of each mode, "
          "fresh processes")  # fmt: skip
    for mode, what in MODES.items():
        print(f"   {mode}: {what}")
    print(f"   lexical: {', '.join(LEXICAL)}")
    print(f"   trajectory: {', '.join(m if isinstance(m, str) else m['name'] for m in TRAJECTORY)}")
    results = run_modes(args, list(MODES))
    med = medians(results)
    for mode in MODES:
        print(f"median {mode:<10}: run {med[mode]['run_s']:.2f} s, loop {med[mode]['loop_s']:.2f} s, CPU "
              f"{med[mode]['cpu_s']:.2f} s, peak RSS {med[mode]['rss_peak'] / MIB:.0f} MiB")  # fmt: skip
    print(f"paired by round (a - b): run time {paired(results, 'trajectory', 'plain')}, CPU time "
          f"{paired(results, 'trajectory', 'plain', 'cpu_s')}")  # fmt: skip
    per_step = (med["trajectory"]["run_s"] - med["plain"]["run_s"]) / (args.samples * args.steps)
    print(f"storing and scoring trajectories (a - b): {share(med, 'trajectory', 'plain', 'run_s')} of the run time "
          f"(a run of ragassay's own work only), {share(med, 'trajectory', 'plain', 'loop_s')} of the run loop, "
          f"{share(med, 'trajectory', 'plain', 'cpu_s')} of the CPU time; "
          f"{per_step * 1e6:.1f} us per step")  # fmt: skip
    print(f"storing only (c - b): {share(med, 'stored', 'plain', 'run_s')} of the run time; the trajectories' "
          f"work once the metrics are listed (a - d): {share(med, 'trajectory', 'unscored', 'run_s')}; "
          f"peak RSS (a - b): {(med['trajectory']['rss_peak'] - med['plain']['rss_peak']) / MIB:+.0f} MiB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", nargs="?", default="overhead", choices=["overhead", "agent", "metrics", "_one"])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--kind", default="instant", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part == "_one":
        one_run(Path(args.root), args.samples, args.steps, args.kind)
    elif args.part == "metrics":
        metric_costs(args)
    elif args.part == "agent":
        agent_part(args)
    else:
        instant_part(args)


if __name__ == "__main__":
    main()
