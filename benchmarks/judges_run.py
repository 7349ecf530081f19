"""End to end: a whole ``ragassay run`` (a subprocess, as a user runs it) against a loopback model.

``--samples`` questions, one ``no_retrieval`` system whose ``openai`` generator answers each, and the
``correctness`` judge on each answer, both at one OpenAI-compatible server on 127.0.0.1 (in its own process) that
answers every call after ``--latency-ms``; ``[project] concurrency`` and the generators' ``concurrency`` are
``--concurrency``; the response cache is off. The server logs each call's start and end (wall clock). Prints:

1. the run window (first call start to last call end, from the server's log) against the ideal,
   calls x latency / concurrency (goal: <= 1.05x);
2. the whole process (``ragassay run`` started to exited) against ideal + 1.6 s (goal: within; 1.5 s until the
   store opened before the first call again, issue 37);
3. what the rest of the process spent: before the first call (start-up, planning) and after the last (verdicts,
   store).

``--floor`` also times ``bare_openai_client.py``: the same calls made by the ``openai`` SDK alone (no ragassay),
alternating with the ``ragassay run``, and ragassay's own share: per pair, the run's figures minus the SDK's;
``--before PYTHON`` also times the ``ragassay`` of another installation (e.g. a virtual environment with an
earlier revision installed, as ``benchmarks/same_outputs.py --keep DIR`` leaves one), alternating with this one,
and the change per pair; ``--repeat N`` measures each N times and prints medians and ranges.

    python benchmarks/judges_run.py [--samples 1000] [--concurrency 16] [--latency-ms 200] [--floor]
        [--before PYTHON] [--repeat N]

``benchmarks/judges.py`` measures the metric alone (``ascore`` called directly); this one measures the runner.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CONFIG = """
    [project]
    name = "judges-run"
    concurrency = {concurrency}

    [dataset]
    options = {{ path = "qa.jsonl" }}

    [llm]
    cache = false

    [systems.model]
    rag = "no_retrieval"
    generator.name = "openai"
    generator.options = {{ model = "gpt-4o-mini", base_url = "{url}/v1", concurrency = {concurrency} }}

    [evaluation]
    metrics = []

    [[evaluation.judges]]
    name = "correctness"
    options.generator.name = "openai"
    options.generator.options = {{ model = "gpt-4o", base_url = "{url}/v1", concurrency = {concurrency} }}
"""


def serve(latency_s: float, ready, stop, log_path: str) -> None:
    """Child process: answers every call after ``latency_s``; writes (start, end) per call to ``log_path``."""
    sys.path.insert(0, str(REPO / "tests"))
    from servers.openai_chat import OpenAIChatServer, Turn

    log: list[tuple[float, float]] = []
    lock = threading.Lock()

    def reply(request):
        start = time.time() - (time.monotonic() - request.received_at)
        time.sleep(latency_s)
        with lock:
            log.append((start, time.time()))
        if request.json.get("response_format"):
            return Turn(text=json.dumps({"explanation": "Same answer.", "judgement": "Correct"}), usage=(300, 10, 0))
        return Turn(text="Ada Lovelace Labs", usage=(40, 5, 0))

    with OpenAIChatServer(default=reply) as server:
        ready.put(server.url)
        stop.wait()
    Path(log_path).write_text(json.dumps(log))


def project(root: Path, url: str, samples: int, concurrency: int) -> Path:
    qa = [
        {"question_id": f"q{i:05d}", "question": f"Who built reactor {i}?", "reference_answers": ["Ada Lovelace Labs"]}
        for i in range(samples)
    ]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    config = root / "ragassay.toml"
    config.write_text(textwrap.dedent(CONFIG.format(url=url, concurrency=concurrency)))
    return config


def measure(args: argparse.Namespace, floor: bool, python: str = sys.executable) -> dict[str, float]:
    """One timed process against a fresh loopback server: ``ragassay run -q`` (the one installed beside
    ``python``), or with ``floor`` the bare SDK client (``bare_openai_client.py``) making the same calls. Prints its
    figures and returns them."""
    latency = args.latency_ms / 1000
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-not-a-real-key"}
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "calls.json"
        ready, stop = multiprocessing.Queue(), multiprocessing.Event()
        child = multiprocessing.Process(target=serve, args=(latency, ready, stop, str(log_path)), daemon=True)
        child.start()
        try:
            url = ready.get(timeout=30)
            config = project(Path(tmp), url, args.samples, args.concurrency)
            command = [str(Path(python).with_name("ragassay")), "run", str(config), "-q"]
            if floor:
                bare = Path(__file__).with_name("bare_openai_client.py")
                command = [sys.executable, str(bare), url, str(args.samples), str(args.concurrency)]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.time()
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            ended = time.time()
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            stop.set()
            child.join(timeout=30)
        if done.returncode != 0:
            sys.exit(f"{command[1]} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        log = json.loads(log_path.read_text())
    calls = len(log)
    first, last = min(s for s, _ in log), max(e for _, e in log)
    ideal = calls * latency / args.concurrency
    window, whole = last - first, ended - started
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    what = "bare openai SDK client (the floor, no ragassay)" if floor else f"ragassay run ({python})"
    print(
        f"{what}: {args.samples} samples, {calls} calls at {args.latency_ms:.0f} ms, concurrency "
        f"{args.concurrency}: ideal {ideal:.2f} s"
    )
    print(
        f"  run window (server log, first call start to last call end): {window:.2f} s = {window / ideal:.3f}x ideal "
        f"(goal <= 1.05x)"
    )
    print(
        f"  whole process: {whole:.2f} s = ideal + {whole - ideal:.2f} s (goal <= ideal + 1.6 s); before the first "
        f"call {first - started:.2f} s, after the last {ended - last:.2f} s"
    )
    per_call = 1000 * (user + system) / calls
    print(f"  process CPU: {user:.2f} s user + {system:.2f} s system ({per_call:.2f} ms per call)")
    return {"window": window / ideal, "over": whole - ideal, "before": first - started, "after": ended - last}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000, help="questions (2 calls each: answer, judgement)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also time the bare openai SDK making the same calls (bare_openai_client.py), alternating with ragassay",
    )
    parser.add_argument(
        "--before",
        metavar="PYTHON",
        help="also time the ragassay installed beside this python (an earlier revision), alternating with this one",
    )
    parser.add_argument("--repeat", type=int, default=1, help="measurements of each process, alternating")
    args = parser.parse_args()
    _say_plugin_index()
    kinds = (["sdk"] if args.floor else []) + (["before"] if args.before else []) + ["ragassay"]
    results: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    for _ in range(args.repeat):
        for kind in kinds:
            python = args.before if kind == "before" else sys.executable
            results[kind].append(measure(args, kind == "sdk", python))
    if args.repeat > 1 or len(kinds) > 1:
        print("summary (median, range):")
        names = {"sdk": "bare SDK", "before": f"before ({args.before})", "ragassay": "ragassay"}
        for kind, runs in results.items():
            print(f"  {names[kind]}: " + ", ".join(_spread(runs, key) for key in runs[0]))
    if args.floor:
        _say_share(results["sdk"], results["ragassay"], "ragassay's own share (per pair, ragassay minus the SDK")
    if args.before:
        _say_share(results["before"], results["ragassay"], "the change (per pair, this ragassay minus the before")


def _say_plugin_index() -> None:
    """Whether the runs find the plugin index (ragassay.plugin_index); without it the first run loads every plugin
    and writes the index, so its start-up is about 0.15 s longer than the others'."""
    from ragassay.plugin_index import index_path, read_index

    path = index_path()
    found = "off" if path is None else "present" if read_index(path) is not None else "absent (the first run writes it)"
    print(f"plugin index: {found}")


def _say_share(floor: list[dict[str, float]], runs: list[dict[str, float]], title: str) -> None:
    """Per alternating pair (same load): the ragassay run's figure minus the other process's (the SDK's, or an
    earlier revision's)."""
    shares = [{key: run[key] - bare[key] for key in ("over", "before", "after")} for bare, run in zip(floor, runs)]
    text = {"over": "whole process", "before": "before first call", "after": "after last"}
    parts = []
    for key, label in text.items():
        values = sorted(share[key] for share in shares)
        parts.append(f"{label} {statistics.median(values):+.3f} s ({values[0]:+.3f} to {values[-1]:+.3f})")
    print(f"  {title}; median, range): " + ", ".join(parts))


def _spread(runs: list[dict[str, float]], key: str) -> str:
    values = sorted(run[key] for run in runs)
    unit = "x" if key == "window" else " s"
    text = {"window": "window", "over": "whole process ideal +", "before": "before first call", "after": "after last"}
    return f"{text[key]} {statistics.median(values):.3f}{unit} ({values[0]:.3f}-{values[-1]:.3f})"


if __name__ == "__main__":
    main()
