"""The LLM-bound part of ``benchmarks/scale.py``: 1, 2 and 4 Ray workers under one shared provider budget.

A naive RAG (keyword retriever, ``openai`` generator) answers ``--calls`` questions through an OpenAI-compatible
server on 127.0.0.1 that answers every request after ``--delay`` seconds and counts the requests in flight. The
generator's ``concurrency`` is the provider budget; with the Ray executor every worker takes its call slots from
one budget actor, so the server must never see more than ``--budget`` calls at once, whatever the number of
workers, and the wall time should approach the ideal ``calls x delay / budget``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import ragassay

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))


class CountingServer:
    """An OpenAI-compatible chat server that answers after ``delay_s`` and records peak concurrency."""

    def __init__(self, delay_s: float):
        from servers.base import JSONServer, Reply

        self.delay_s = delay_s
        self.in_flight = self.peak = self.calls = 0
        self._lock = threading.Lock()

        def chat(request):
            with self._lock:
                self.in_flight += 1
                self.calls += 1
                self.peak = max(self.peak, self.in_flight)
            try:
                time.sleep(self.delay_s)
            finally:
                with self._lock:
                    self.in_flight -= 1
            return Reply(200, _completion(request.json))

        self.server = JSONServer({("POST", "/v1/chat/completions"): chat})

    def __enter__(self) -> CountingServer:
        self.server.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self.server.__exit__(*exc)

    @property
    def url(self) -> str:
        return self.server.url


def _completion(body) -> dict:
    question = body["messages"][-1]["content"][-60:] if body and body.get("messages") else ""
    return {
        "id": "bench",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "bench-model") if body else "bench-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"An answer to: {question}"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 50, "completion_tokens": 8, "total_tokens": 58},
    }


def write_project(root: Path, url: str, calls: int, budget: int, workers: int) -> Path:
    (root / "corpus").mkdir(parents=True, exist_ok=True)
    for i in range(20):
        (root / "corpus" / f"d{i}.md").write_text(f"# Doc {i}\n\nFact {i}: the value of item {i} is {i * 3}.\n")
    with open(root / "qa.jsonl", "w", encoding="utf-8") as handle:
        for i in range(calls):
            record = {"question_id": f"q{i}", "question": f"What is the value of item {i % 20}? (case {i})"}
            handle.write(json.dumps(record) + "\n")
    config = root / f"ragassay-{workers}.toml"
    config.write_text(
        textwrap.dedent(f"""
        [project]
        concurrency = {budget * 4}
        executor = "ray"
        results = "results-{workers}.db"
        [project.ray]
        workers = {workers}
        cpus_per_worker = 0.25
        batch_size = 8
        batches_in_flight = 4
        [llm]
        cache = false
        [corpus]
        paths = ["corpus/*.md"]
        [dataset]
        options = {{ path = "qa.jsonl" }}
        [systems.naive]
        retriever = "keyword"
        options = {{ top_k = 2 }}
        [systems.naive.generator]
        name = "openai"
        options = {{ model = "bench-model", base_url = "{url}/v1", concurrency = {budget}, max_retries = 0 }}
        [evaluation]
        metrics = ["token_recall"]
    """)
    )
    return config


def llm_bound(args) -> None:
    workers_list = [int(w) for w in args.llm_workers.split(",")]
    ideal = args.calls * args.delay / args.budget
    print(
        f"== LLM-bound: {args.calls} generator calls, server delay {args.delay * 1000:.0f} ms, shared budget "
        f"concurrency {args.budget}: ideal {ideal:.1f} s"
    )
    print(f"{'workers':>7} {'wall (s)':>9} {'vs ideal':>9} {'calls':>6} {'peak in flight':>15} {'budget held':>12}")
    for workers in workers_list:
        with tempfile.TemporaryDirectory(prefix="ragassay-llm-") as tmp, CountingServer(args.delay) as server:
            config = write_project(Path(tmp), server.url, args.calls, args.budget, workers)
            started: list[float] = []
            summary = ragassay.run(config, new=True, on_start=lambda _s, t=started: t.append(time.perf_counter()))
            wall = time.perf_counter() - started[0]
            assert summary.failed == 0, summary.failures[:3]
            held = "yes" if server.peak <= args.budget else "NO"
            print(f"{workers:>7} {wall:>9.1f} {wall / ideal:>8.2f}x {server.calls:>6} {server.peak:>15} {held:>12}")
        import ray

        ray.shutdown()  # each row on a fresh local cluster sized for its workers
