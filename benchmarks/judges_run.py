"""End to end: a whole ``ragassay run`` (a subprocess, as a user runs it) against a loopback model.

``--samples`` questions, one ``no_retrieval`` system whose ``openai`` generator answers each, and the
``correctness`` judge on each answer, both at one OpenAI-compatible server on 127.0.0.1 (in its own process) that
answers every call after ``--latency-ms``; ``[project] concurrency`` and the generators' ``concurrency`` are
``--concurrency``; the response cache is off. The server logs each call's start and end (wall clock). Prints:

1. the run window (first call start to last call end, from the server's log) against the ideal,
   calls x latency / concurrency (goal: <= 1.05x);
2. the whole process (``ragassay run`` started to exited) against ideal + 1.5 s (goal: within);
3. what the rest of the process spent: before the first call (start-up, planning) and after the last (verdicts,
   store).

    python benchmarks/judges_run.py [--samples 1000] [--concurrency 16] [--latency-ms 200]

``benchmarks/judges.py`` measures the metric alone (``ascore`` called directly); this one measures the runner.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000, help="questions (2 calls each: answer, judgement)")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency-ms", type=float, default=200)
    args = parser.parse_args()
    latency = args.latency_ms / 1000
    env = {**os.environ, "OPENAI_API_KEY": "sk-benchmark-not-a-real-key"}
    ragassay = Path(sys.executable).with_name("ragassay")
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "calls.json"
        ready, stop = multiprocessing.Queue(), multiprocessing.Event()
        child = multiprocessing.Process(target=serve, args=(latency, ready, stop, str(log_path)), daemon=True)
        child.start()
        try:
            config = project(Path(tmp), ready.get(timeout=30), args.samples, args.concurrency)
            started = time.time()
            done = subprocess.run([str(ragassay), "run", str(config), "-q"], env=env, capture_output=True, text=True)
            ended = time.time()
            cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            stop.set()
            child.join(timeout=30)
        if done.returncode != 0:
            sys.exit(f"ragassay run failed ({done.returncode}):\n{done.stderr[-2000:]}")
        log = json.loads(log_path.read_text())
    calls = len(log)
    first, last = min(s for s, _ in log), max(e for _, e in log)
    ideal = calls * latency / args.concurrency
    window, whole = last - first, ended - started
    print(
        f"ragassay run: {args.samples} samples, {calls} calls at {args.latency_ms:.0f} ms, concurrency "
        f"{args.concurrency}: ideal {ideal:.2f} s"
    )
    print(
        f"  run window (server log, first call start to last call end): {window:.2f} s = {window / ideal:.3f}x ideal "
        f"(goal <= 1.05x)"
    )
    print(
        f"  whole process: {whole:.2f} s = ideal + {whole - ideal:.2f} s (goal <= ideal + 1.5 s); before the first "
        f"call {first - started:.2f} s, after the last {ended - last:.2f} s"
    )
    print(
        f"  ragassay process CPU: {cpu.ru_utime:.2f} s user + {cpu.ru_stime:.2f} s system "
        f"({1000 * (cpu.ru_utime + cpu.ru_stime) / calls:.2f} ms per call)"
    )


if __name__ == "__main__":
    main()
