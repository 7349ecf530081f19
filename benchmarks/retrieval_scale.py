"""Retrieval at benchmark scale (issue 22): ``ragassay run`` against a direct script, on a synthetic BEIR collection.

Builds a seeded BEIR-format collection (``--docs`` documents of 150-300 words, ``--queries`` queries, graded
qrels; see ``retrieval_scale_data.py``), then times, each in a fresh process, cold (new project folder, empty
cache folder):

* ``ragassay run`` of the ``--systems`` (keyword, bm25, dense: local MiniLM, hybrid: bm25 + dense by RRF) at
  ``top_k = 100`` with nDCG@10 and recall@100, once for all of them and once for the lexical ones alone;
* the direct script (``retrieval_scale_direct.py``: rank_bm25, transformers + numpy, RRF, pytrec_eval) on the
  same systems.

Printed: wall and CPU time of both and their ratio (goals: at most 1.3x for the whole job, 1.5x for the lexical
systems), queries/s per retriever, peak RSS, the results store's size against the corpus (goal: under 3x), the
largest per-query difference of nDCG@10 and recall@100 between ragassay and the direct script (goal: 0, or below
1e-9), and how long a cold run with a dense system takes to print its first embedding progress line (goal: under
10 s) and its first with chunks embedded.

ragassay's queries/s per system is given two ways: its units over the sum of their latencies (the time inside
the system's ``answer``; units of a lexical retriever run one at a time on the event loop, but dense units overlap
while their queries wait for a shared embedding batch, so for them this understates the rate, by up to the
concurrency), and, when it spans over a second, its units over the time its outputs took to arrive (the work is
ordered system by system: from the previous system's last output, or the first output's start, to its own last
output, as the store's ``created_at`` stamps them, batch by batch, every 0.25-1 s). The direct script's is
queries over its query loop (with the query embedding for dense, and both parts for hybrid). Peak RSS is each
process's own (``os.wait4``), the process started by a small launcher so that it does not inherit this script's
high-water mark.

    python benchmarks/retrieval_scale.py [--docs 5000] [--queries 300] [--systems keyword,bm25,dense,hybrid]
        [--seed 0] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from retrieval_scale_data import Dataset, generate, write_files_layout

HERE = Path(__file__).resolve().parent
LEXICAL = ("keyword", "bm25")
TOP_K = 100
METRICS = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100"}
EMBEDDING_LINE = re.compile(r"embedding", re.IGNORECASE)
EMBEDDED_SOME = re.compile(r"embedding\D*[1-9][\d,]*\s*/", re.IGNORECASE)  # "corpus embedding 128/5,000 chunks"

# ---- the one place that says how ragassay reads the collection and which rag ranks ----------------------
#: "beir": the BEIR folder as published; "files": converted to a samples .jsonl and a documents .jsonl.
SOURCE = "beir"
#: "retrieval": ranked ids and scores only; "naive": retrieve, then the extractive generator answers.
RAG = "retrieval"
#: Whole documents as chunks, title and text joined by a space (BEIR's and MTEB's convention); the direct script
#: embeds and tokenises ``(title + " " + text).strip()`` likewise.
CHUNKER = '{ name = "document", options = { title = "join" } }'
DIRECT_DOC_TEXT = "title_space_text"


def dataset_toml(data: Dataset, folder: Path) -> str:
    """The ``[dataset]`` (and ``[corpus]``) tables reading the collection written under ``folder``."""
    if SOURCE == "beir":
        data.write_beir(folder / "beir")
        return '[dataset]\nsource = "beir"\noptions = { path = "beir", split = "test" }'
    tables = write_files_layout(data, folder)
    return f"{tables['dataset']}\n\n{tables['corpus']}"


def system_toml(name: str) -> str:
    """One ``[systems.<name>]`` table at ``top_k = 100``."""
    retriever = {
        "keyword": '"keyword"',
        "bm25": '"bm25"',
        "dense": '"dense"',
        "hybrid": '{ name = "hybrid", options = { retrievers = ["bm25", "dense"], candidates = 100 } }',
    }[name]
    generator = 'generator = "extractive"\n' if RAG == "naive" else ""
    return f'[systems.{name}]\nrag = "{RAG}"\nretriever = {retriever}\n{generator}options = {{ top_k = {TOP_K} }}\n'


# ---------------------------------------------------------------------------------------------------------


def write_project(folder: Path, data: Dataset, systems: list[str]) -> Path:
    """A fresh project in ``folder``: the collection, a config, an empty cache folder."""
    folder.mkdir(parents=True)
    metrics = ", ".join(
        f'{{ name = "{name}", label = "{label}", options = {{ k = {k} }} }}'
        for label, name, k in (("ndcg@10", "ndcg_at_k", 10), ("recall@100", "ir_recall_at_k", 100))
    )
    tables = [
        '[project]\nname = "retrieval-scale"\nresults = "results.db"\ncache_dir = "cache"\n',
        dataset_toml(data, folder) + "\n",
        f"[defaults]\nchunker = {CHUNKER}\n",
        *(system_toml(s) for s in systems),
        f"[evaluation]\nmetrics = [{metrics}]\n",
    ]
    config = "\n".join(tables)
    (folder / "ragassay.toml").write_text(config, encoding="utf-8")
    return folder


#: Runs a command and writes its wall time, CPU time and peak RSS (``os.wait4``) as JSON to a file. Run in a small
#: process of its own: Linux keeps the RSS high-water mark of the process that forks across ``exec``, so a child
#: forked by this (large) benchmark process would report at least this process's peak.
LAUNCHER = """
import json, os, subprocess, sys, time
command, out = json.loads(sys.argv[1]), sys.argv[2]
started = time.perf_counter()
process = subprocess.Popen(command, cwd=sys.argv[3] or None)
_, status, usage = os.wait4(process.pid, 0)
wall = time.perf_counter() - started
with open(out, "w") as handle:
    json.dump({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kib": usage.ru_maxrss}, handle)
sys.exit(os.waitstatus_to_exitcode(status))
"""


class Measured:
    """A child process's wall time, CPU time and peak RSS, and its output lines with their times."""

    def __init__(self, command: list[str], cwd: Path | None = None):
        self.command = command
        self.lines: list[tuple[float, str]] = []
        with tempfile.NamedTemporaryFile(suffix=".json") as figures:
            started = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, json.dumps(command), figures.name, str(cwd or "")],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
            )
            reader = threading.Thread(target=self._read, args=(process.stdout, started), daemon=True)
            reader.start()
            process.wait()
            reader.join()
            if process.returncode != 0:
                tail = "\n".join(line for _, line in self.lines[-30:])
                raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{tail}")
            measured = json.loads(Path(figures.name).read_text(encoding="utf-8"))
        self.wall_s, self.cpu_s = measured["wall_s"], measured["cpu_s"]
        self.maxrss_mib = measured["maxrss_kib"] / 1024

    def _read(self, stream, started: float) -> None:
        pending = b""
        while chunk := stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536):
            pending += chunk
            *complete, pending = re.split(rb"[\r\n]", pending)
            now = time.perf_counter() - started
            self.lines += [(now, line.decode("utf-8", "replace")) for line in complete if line.strip()]
        if pending.strip():
            self.lines.append((time.perf_counter() - started, pending.decode("utf-8", "replace")))

    def first(self, pattern: re.Pattern) -> tuple[float, str] | None:
        """(seconds after start, line) of the first output line matching ``pattern``."""
        return next(((t, line) for t, line in self.lines if pattern.search(line)), None)


def ragassay_run(folder: Path) -> Measured:
    ragassay = Path(sys.executable).with_name("ragassay")
    command = [str(ragassay)] if ragassay.exists() else [sys.executable, "-m", "ragassay"]
    return Measured([*command, "run", "--config", str(folder)])


def direct_run(data_folder: Path, systems: list[str], out: Path) -> tuple[Measured, dict]:
    script = HERE / "retrieval_scale_direct.py"
    command = [sys.executable, str(script), str(data_folder), "--systems", ",".join(systems), "--out", str(out)]
    measured = Measured([*command, "--doc-text", DIRECT_DOC_TEXT], cwd=HERE)
    return measured, json.loads(out.read_text(encoding="utf-8"))


def stored(folder: Path, systems: list[str]) -> dict[str, dict]:
    """Per system: per-query values of each metric label and the queries/s from the store's stamps."""
    import ragassay

    data = ragassay.open_run(config=folder).data()
    found = {}
    for system in systems:
        values = {label: dict(zip(data.question_ids, data.values(system, label).tolist())) for label in METRICS}
        latency = sum(o.latency_s or 0.0 for (name, _), o in data.outputs.items() if name == system)
        found[system] = {"values": values, "answer_qps": len(data.question_ids) / max(latency, 1e-9)}
    connection = sqlite3.connect(folder / "results.db")
    try:
        rows = connection.execute("SELECT system, created_at, latency_s FROM outputs ORDER BY created_at").fetchall()
    finally:
        connection.close()
    previous = rows[0][1] - (rows[0][2] or 0.0) if rows else 0.0
    for system in systems:  # outputs arrive system by system, in the configured order
        stamps = [stamp for name, stamp, _ in rows if name == system]
        end = max(stamps)
        found[system]["stamp_qps"] = len(stamps) / max(end - previous, 1e-9) if end - previous > 1.0 else None
        previous = end
    return found


def store_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("results.db*"))


def direct_qps(report: dict, system: str) -> float:
    t, n = report["timings"], report["queries"]
    seconds = {
        "keyword": lambda: t["keyword"]["queries"],
        "bm25": lambda: t["bm25"]["queries"],
        "dense": lambda: t["dense"]["queries"] + t["dense"]["search"],
        "hybrid": lambda: t["bm25"]["queries"] + t["dense"]["queries"] + t["dense"]["search"] + t["hybrid"]["fuse"],
    }[system]()
    return n / max(seconds, 1e-9)


def compare(job: str, systems: list[str], ours: Measured, theirs: Measured, folder: Path, report: dict) -> dict:
    """Print one job's figures; returns them."""
    values = stored(folder, systems)
    print(f"\n== {job}: {', '.join(systems)} ({report['queries']} queries, top_k = {TOP_K})")
    print(f"{'':24}{'ragassay':>12}{'direct':>12}{'ratio':>9}")
    print(f"{'wall time (s)':24}{ours.wall_s:12.2f}{theirs.wall_s:12.2f}{ours.wall_s / theirs.wall_s:9.2f}x")
    print(f"{'CPU time (s)':24}{ours.cpu_s:12.2f}{theirs.cpu_s:12.2f}{ours.cpu_s / theirs.cpu_s:9.2f}x")
    rss = ours.maxrss_mib / theirs.maxrss_mib
    print(f"{'peak RSS (MiB)':24}{ours.maxrss_mib:12.0f}{theirs.maxrss_mib:12.0f}{rss:9.2f}x")
    for system in systems:
        direct = direct_qps(report, system)
        mine = values[system]["answer_qps"]
        ratio = mine / direct
        print(f"{'queries/s ' + system:24}{mine:12.1f}{direct:12.1f}{ratio:9.2f}x   (ragassay: units / total latency)")
        stamped = values[system]["stamp_qps"]
        if stamped is not None:
            print(f"{'':24}{stamped:12.1f}{'':12}{stamped / direct:9.2f}x   (ragassay: units / span of its outputs)")
    worst = {}
    for system in systems:
        for label, measure in METRICS.items():
            per_query = report["scores"][system]
            diffs = [abs(values[system]["values"][label][qid] - m[measure]) for qid, m in per_query.items()]
            mean_ours = sum(values[system]["values"][label].values()) / len(per_query)
            mean_direct = sum(m[measure] for m in per_query.values()) / len(per_query)
            worst[(system, label)] = max(diffs)
            differing = sum(d > 1e-9 for d in diffs)
            print(
                f"  {system:8} {label:11} ragassay {mean_ours:.4f}  direct {mean_direct:.4f}  "
                f"max per-query difference {max(diffs):.3g} ({differing} queries differ)"
            )
    return {"wall": (ours.wall_s, theirs.wall_s), "worst": worst}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--systems", default="keyword,bm25,dense,hybrid")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="Keep the collection and the projects in this (new) folder.")
    args = parser.parse_args()
    systems = args.systems.split(",")
    unknown = set(systems) - {"keyword", "bm25", "dense", "hybrid"}
    if unknown:
        raise SystemExit(f"unknown systems: {', '.join(sorted(unknown))}")
    root = (args.keep or Path(tempfile.mkdtemp(prefix="retrieval-scale-"))).resolve()
    root.mkdir(parents=True, exist_ok=True)
    try:
        run_all(root, args, systems)
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def run_all(root: Path, args: argparse.Namespace, systems: list[str]) -> None:
    started = time.perf_counter()
    data = generate(args.docs, args.queries, args.seed)
    beir = data.write_beir(root / "collection")
    corpus_bytes = (beir / "corpus.jsonl").stat().st_size
    print(
        f"collection: {len(data.docs)} documents ({corpus_bytes / 2**20:.1f} MiB corpus.jsonl), {len(data.queries)} "
        f"queries, {sum(map(len, data.qrels.values()))} judgements, seed {args.seed}; generated in "
        f"{time.perf_counter() - started:.1f} s; source = {SOURCE}, rag = {RAG}; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    jobs = [("all systems", systems)]
    lexical = [s for s in systems if s in LEXICAL]
    if lexical and lexical != systems:
        jobs.append(("lexical systems", lexical))
    results = {}
    for job, names in jobs:
        folder = write_project(root / job.replace(" ", "-"), data, names)
        ours = ragassay_run(folder)
        theirs, report = direct_run(beir, names, root / f"{job.replace(' ', '-')}-direct.json")
        results[job] = compare(job, names, ours, theirs, folder, report)
        size = store_bytes(folder)
        print(f"  results store: {size / 2**20:.1f} MiB = {size / corpus_bytes:.2f}x the corpus (goal < 3x)")
        if "dense" in names or "hybrid" in names:
            for what, pattern in (
                ("first embedding progress line", EMBEDDING_LINE),
                ("first with chunks done", EMBEDDED_SOME),
            ):
                first = ours.first(pattern)
                seen = f"{first[0]:.1f} s: {first[1].strip()[:100]}" if first else "none printed"
                print(f"  {what} (cold): {seen}")
    print(f"\nload average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for job, figures in results.items():
        ours_s, direct_s = figures["wall"]
        goal = 1.5 if job == "lexical systems" or set(systems) <= set(LEXICAL) else 1.3
        print(f"{job}: {ours_s / direct_s:.2f}x the direct script's wall time (goal <= {goal}x)")
    worst = max((v for f in results.values() for (s, _), v in f["worst"].items() if s in ("bm25", "dense")), default=0)
    print(f"bm25/dense: largest per-query metric difference {worst:.3g} (goal: 0 or < 1e-9)")


if __name__ == "__main__":
    main()
