"""Report benchmark on 10,000 samples x 4 systems x 6 metrics: the statistics, ``compare`` and the HTML report.

Part 1 times :func:`ragassay.analysis.verdicts.decide_values`: every cell's mean and BCa interval, every pair's
sign-flip test and inverted interval, Tarone's reduction and Holm, effect sizes, MDEs and verdicts.
Part 2 writes the same kind of run (seeded synthetic outputs and metric values) into a SQLite results store
through its write API, then runs ``ragassay compare RUN --format json`` and ``ragassay report RUN --html`` in
this process and prints, for each, the wall time and the SQL statements it executed (a SQLAlchemy event listener
on every engine), and the HTML size (goal < 10 MB). Only the public CLI is called, so the same script measures
an older checkout too ("before and after"; docs/results.md quotes both).

    python benchmarks/report.py [--samples 10000] [--systems 4] [--metrics 6] [--folder DIR]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

GOAL_S = 5.0
HTML_GOAL_S = 15.0
HTML_GOAL_BYTES = 10_000_000


def synthetic_values(samples: int, systems: int, metrics: int, seed: int = 0):
    """(system, metric) -> {question_id: score in [0, 1]}: a shared per-sample difficulty plus noise, each
    system a little better than the one before (so that some verdicts are wins)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.random((samples, metrics))
    ids = [f"q{i:06d}" for i in range(samples)]
    names = [f"system{k}" for k in range(systems)]
    values = {}
    for k, name in enumerate(names):
        scores = np.clip(difficulty + 0.005 * k + rng.normal(0, 0.1, (samples, metrics)), 0, 1)
        for j in range(metrics):
            values[(name, f"metric{j}")] = dict(zip(ids, scores[:, j].tolist()))
    return values, names, [f"metric{j}" for j in range(metrics)]


def time_verdicts(samples: int = 10_000, systems: int = 4, metrics: int = 6) -> float:
    """Seconds :func:`decide_values` takes on synthetic scores of this size (printed too)."""
    from ragassay.analysis.verdicts import decide_values

    values, names, columns = synthetic_values(samples, systems, metrics)
    start = time.perf_counter()
    verdicts = decide_values(values, names, columns, {c: "higher" for c in columns})
    seconds = time.perf_counter() - start
    decided = sum(p.verdict in ("better", "worse") for p in verdicts.pairs)
    print(
        f"verdicts: {samples} samples x {systems} systems x {metrics} metrics: {seconds:.2f} s "
        f"(goal < {GOAL_S:.0f} s; {len(verdicts.cells)} cells, {len(verdicts.pairs)} pairs, {decided} decided)"
    )
    return seconds


def write_store_run(store, samples: int, systems: int, metrics: int, seed: int = 0) -> str:
    """A complete synthetic run written through the store's write API; returns its id. Each sample has a
    ``metadata.kind`` of 4 values; each output an answer, 3 contexts with ids, metric values (1% unscored)."""
    import json

    from ragassay.models import MetricValue, RAGOutput, Sample
    from ragassay.store.database import UnitResult

    values, names, columns = synthetic_values(samples, systems, metrics, seed)
    ids = [f"q{i:06d}" for i in range(samples)]
    rows = [
        Sample(
            question_id=q,
            question=f"question {i}?",
            reference_answers=[f"answer {i}"],
            reference_context_ids=[f"doc{i}#0"],
            metadata={"kind": f"kind{i % 4}"},
        )
        for i, q in enumerate(ids)
    ]
    run_id = f"bench-{samples}-{systems}-{metrics}"
    spec = {"metrics": {c: {} for c in columns}, "judges": {}}
    store.create_run(
        {
            "id": run_id,
            "fingerprint": run_id,
            "project": "bench",
            "config_path": "-",
            "config_json": "{}",
            "spec_json": json.dumps(spec),
            "ragassay_version": "0",
            "sample_count": samples,
        },
        [(name, "{}") for name in names],
        rows,
    )
    rng = np.random.default_rng(seed + 1)
    for name in names:
        unscored = rng.random((samples, metrics)) < 0.01
        units = []
        for i, q in enumerate(ids):
            output = RAGOutput(
                answer=f"{name} answers question {i} " + "word " * 30,
                contexts=[f"context {i}-{k} " + "text " * 60 for k in range(3)],
                context_ids=[f"doc{i + k}#0" for k in range(3)],
                latency_s=float(rng.random()),
            )
            scored = [
                MetricValue(metric=c, value=None, unscored_reason="synthetic gap")
                if unscored[i, j]
                else MetricValue(metric=c, value=values[(name, c)][q])
                for j, c in enumerate(columns)
            ]
            units.append(UnitResult(name, q, "ok", output, metrics=scored))
        store.write_units(run_id, units)
    store.finish_run(run_id, "complete", [])
    return run_id


class StatementCounter:
    """Counts the SQL statements every SQLAlchemy engine of this process executes (an engine event listener)."""

    def __init__(self):
        self.count = 0

    def __enter__(self):
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.listen(Engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc):
        from sqlalchemy import event
        from sqlalchemy.engine import Engine

        event.remove(Engine, "before_cursor_execute", self._count)

    def _count(self, *args, **kwargs):
        self.count += 1


def build_store(path, samples: int, systems: int, metrics: int) -> str:
    """Write the synthetic run into the SQLite file ``path`` (reused when it already holds it); its run id."""
    from pathlib import Path

    from ragassay.store import open_store, store_url

    store = open_store(store_url(str(path), Path.cwd()))
    try:
        run_id = f"bench-{samples}-{systems}-{metrics}"
        if not any(run["id"] == run_id for run in store.list_runs()):
            start = time.perf_counter()
            write_store_run(store, samples, systems, metrics)
            print(
                f"store: wrote {samples} x {systems} outputs with {metrics} metrics each in "
                f"{time.perf_counter() - start:.1f} s (setup)"
            )
        return run_id
    finally:
        store.close()


def time_command(args: list[str]) -> tuple[float, int, int]:
    """(seconds, SQL statements, output characters) of one ``ragassay`` command run in this process."""
    from click.testing import CliRunner

    from ragassay.cli.main import cli

    with StatementCounter() as counter:
        start = time.perf_counter()
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        seconds = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"ragassay {' '.join(args)} failed ({result.exit_code}): {result.output[-2000:]}")
    return seconds, counter.count, len(result.output)


def time_cli(samples: int = 10_000, systems: int = 4, metrics: int = 6, folder: str | None = None) -> dict:
    """``compare`` and ``report --html`` on the stored synthetic run: time, SQL statements, output size."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as scratch:
        base = Path(folder or scratch)
        base.mkdir(parents=True, exist_ok=True)
        db = base / f"report-{samples}-{systems}-{metrics}.db"
        run_id = build_store(db, samples, systems, metrics)
        figures = {}
        for label, args in (
            ("compare", ["compare", run_id, "--db", str(db), "--format", "json"]),
            ("report --html", ["report", run_id, "--db", str(db), "--html", str(base / "report.html")]),
        ):
            time_command(args)  # warm: imports, first connection
            seconds, statements, _ = time_command(args)
            figures[label] = (seconds, statements)
            print(f"ragassay {label}: {seconds:.2f} s, {statements} SQL statements")
        size = (base / "report.html").stat().st_size
        print(f"HTML report: {size / 1e6:.2f} MB (goal < 10 MB)")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=4)
    parser.add_argument("--metrics", type=int, default=6)
    parser.add_argument("--folder", default=None, help="Keep the results database here (reused by later runs).")
    args = parser.parse_args()
    time_verdicts(args.samples, args.systems, args.metrics)
    time_cli(args.samples, args.systems, args.metrics, args.folder)


if __name__ == "__main__":
    main()
