"""The live part of ``benchmarks/sequential.py``: real ``ragassay run`` processes, full and ``--sequential``,
against a loopback judge with a fixed latency (see that script's docstring). Run it through that script."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The loopback servers shared with the tests, imported as `servers` from the tests folder put first on the path
# (as benchmarks/judges.py does): never as `tests.servers`.
sys.path.insert(0, str(REPO / "tests"))

from servers.openai_chat import OpenAIChatServer, Turn  # noqa: E402

EFFECTS = [("0 points", 0.60, 0.60), ("15 points", 0.60, 0.75), ("30 points", 0.60, 0.90)]
CONCURRENCY = 16

CONFIG = """
[project]
name = "sequential-benchmark"
concurrency = {concurrency}

[corpus]
paths = ["corpus/*"]

[dataset]
options = {{ path = "qa.jsonl" }}

[llm]
cache = false

[defaults]
chunker = {{ name = "recursive", options = {{ size = 200, overlap = 20 }} }}
retriever = "bm25"

[systems.a]
generator = {{ name = "openai", options = {{ model = "sys-a", base_url = "{url}/v1", concurrency = {concurrency} }} }}

[systems.b]
generator = {{ name = "openai", options = {{ model = "sys-b", base_url = "{url}/v1", concurrency = {concurrency} }} }}

[evaluation]
metrics = ["token_recall"]
judges = [{{ name = "correctness", options = {{ generator = {{ name = "openai", options = {{ {judge} }} }} }} }}]
decide = ["judge:correctness"]
sequential = {{ batch = {batch} }}
"""

DOCS = {f"doc{i}.md": f"# Reactor {i}\n\nReactor {i} was built by lab {i % 7} in {1950 + i}.\n" for i in range(30)}


def responder(rates: dict[str, float], latency: float):
    """Answers at once, naming the system; the judge after ``latency`` s, Correct at the system's rate."""

    def reply(request) -> Turn:
        body = request.json
        if not body.get("response_format"):
            return Turn(text=f"The answer of {body['model']}.", usage=(200, 5, 0))
        prompt = json.dumps(body["messages"], sort_keys=True)
        system = "sys-a" if "sys-a" in prompt else "sys-b"
        draw = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "big") / 2**64
        verdict = "Correct" if draw < rates[system] else "Incorrect"
        return Turn(text=json.dumps({"explanation": "-", "judgement": verdict}), usage=(300, 10, 0), delay_s=latency)

    return reply


def project(root: Path, url: str, samples: int, batch: int) -> Path:
    (root / "corpus").mkdir(parents=True)
    for name, text in DOCS.items():
        (root / "corpus" / name).write_text(text)
    qa = [
        {"question_id": f"q{i:04d}", "question": f"Who built reactor {i % 30}? ({i})", "reference_answers": ["lab"]}
        for i in range(samples)
    ]
    (root / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qa))
    config = root / "ragassay.toml"
    config.write_text(
        textwrap.dedent(
            CONFIG.format(
                url=url,
                batch=batch,
                concurrency=CONCURRENCY,
                judge=f'model = "judge", base_url = "{url}/v1", concurrency = {CONCURRENCY}',
            )
        )
    )
    return config


def ragassay(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGASSAY_")} | {"OPENAI_API_KEY": "sk-bench"}
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "ragassay", *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"ragassay {' '.join(args)} failed:\n{result.stderr}")
    return result, time.perf_counter() - start


def window(stderr: str) -> float:
    """The run window: 'units done in N s' of the run's closing line."""
    return float(re.search(r"units done in ([\d.]+)s", stderr).group(1))


def effect_row(name: str, rates: tuple[float, float], args) -> str:
    with tempfile.TemporaryDirectory(prefix="ragassay-sequential-") as folder:
        reply = responder({"sys-a": rates[0], "sys-b": rates[1]}, args.judge_latency)
        with OpenAIChatServer(default=reply) as server:
            config = project(Path(folder), server.url, args.samples, args.live_batch)
            full, full_s = ragassay("run", str(config), "-q", "--new", "--no-sequential")
            full_calls = server.calls
            sequential, sequential_s = ragassay("run", str(config), "--sequential", "--new")
            calls = server.calls - full_calls
        record = re.search(
            r"b vs a on judge:correctness: ([a-z -]+), (?:settled at|still open after) (\d+)", sequential.stdout
        )
        decision, judged = (record.group(1), int(record.group(2))) if record else ("?", args.samples)
    return (
        f"{name:<10} {decision:<12} {judged:>4} of {args.samples}  {calls:>5} of {full_calls:<5} "
        f"{full_calls - calls:>6}  {sequential_s:>6.1f} s of {full_s:>5.1f} s  "
        f"{window(sequential.stderr):>6.1f} s of {window(full.stderr):>5.1f} s"
    )


def live(args) -> None:
    print(
        f"live: real 'ragassay run' processes, {args.samples} samples x 2 systems, judge "
        f"{args.judge_latency * 1000:.0f} ms a call, concurrency {CONCURRENCY}, batch {args.live_batch}, alpha "
        "0.05; calls as the loopback server counted them (answers + judgements)"
    )
    print(f"{'effect':<10} {'decision':<12} {'judged':<10} {'calls':<14} {'saved':>6}  {'process':<17} run window")
    for name, base, candidate in EFFECTS:
        print(effect_row(name, (base, candidate), args), flush=True)
