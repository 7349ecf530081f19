"""Fault injection for whole ``ragassay run`` processes: a 2,000-sample project, the faults, their outcomes.

Shared by ``tests/faults/test_faults.py`` and ``benchmarks/faults.py``: import it as ``fault_harness`` with
this folder on ``sys.path`` (never through a package named ``tests``). Run as a script it is the faulty child:
it arms one fault, then runs the ragassay CLI in the same process::

    python fault_harness.py child '{"after_units": 900, "phase": "values", "action": "kill"}' run CONFIG -q

A fault fires in the write of the batch that holds the ``after_units``-th unit, at a phase of that write:
``outputs`` (after its first outputs INSERT), ``values`` (after its metric-values INSERT), ``commit`` (just
before COMMIT) or ``after`` (once committed). Points are counted in stored units, never timed, so the outcome
of a scenario does not depend on the machine's speed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
SAMPLES = 2000
SYSTEMS = ("pre", "kw")
METRICS = ("token_recall", "exact_match", "contains_answer", "k_precision", "context_mrr")
DOCS = 100
RUN_TIMEOUT_S = 300  # catches a hang only: a run of this project takes seconds


@dataclasses.dataclass
class Outcome:
    """How one scenario ended: the faulty run's exit code and error line, then the state after recovery."""

    scenario: str
    outcome: str  # what happened, in words
    exit_code: int  # of the faulty run (-9: killed)
    message: str = ""  # its one error line ("" when it had none)
    digest_match: bool = False  # the store after recovery holds exactly what a clean run stores
    problems: list[str] = dataclasses.field(default_factory=list)  # broken guarantees (empty when all held)


# -- the project --------------------------------------------------------------------------------------------


def answer_of(i: int) -> str:
    """Precomputed answers that overlap their reference by a varying amount (values differ between samples)."""
    return " ".join(["the", "value", "is", str(i * 7 % 1000), "for", "item", str(i)][: 2 + i % 6])


def write_project(root: Path, *, results: str = "db/results.db", systems: str | None = None, project: str = "") -> Path:
    """A project of :data:`SAMPLES` samples under ``root``: a precomputed system and keyword+extractive over
    :data:`DOCS` documents, lexical metrics (``systems``: other ``[systems]`` tables; ``project``: more
    ``[project]`` keys). Returns the config path."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus").mkdir(exist_ok=True)
    for d in range(DOCS):
        text = " ".join(f"Item number {i} in the catalogue has value {i * 7 % 1000}." for i in range(d, SAMPLES, DOCS))
        (root / "corpus" / f"doc{d}.txt").write_text(text, encoding="utf-8")
    with open(root / "qa.jsonl", "w", encoding="utf-8") as qa, open(root / "out.jsonl", "w", encoding="utf-8") as out:
        for i in range(SAMPLES):
            fact = f"Item number {i} in the catalogue has value {i * 7 % 1000}."
            qid, doc = f"q{i:04d}", f"corpus/doc{i % DOCS}.txt"
            qa.write(
                json.dumps(
                    {
                        "question_id": qid,
                        "question": f"What is the value of item number {i} in the catalogue?",
                        "reference_answers": [f"value {i * 7 % 1000}"],
                        "reference_contexts": [fact],
                        "reference_context_ids": [doc],
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps({"question_id": qid, "answer": answer_of(i), "contexts": [fact], "context_ids": [doc]})
            )
            out.write("\n")
    systems = systems or (
        '[systems.pre]\nrag = { name = "precomputed", options = { path = "out.jsonl" } }\n'
        '[systems.kw]\nretriever = "keyword"\ngenerator = "extractive"\noptions = { top_k = 2 }\n'
    )
    config = root / "ragassay.toml"
    config.write_text(
        f'[project]\nresults = "{results}"\nconcurrency = 8\n{project}[corpus]\npaths = ["corpus/*"]\n'
        f'[dataset]\noptions = {{ path = "qa.jsonl" }}\n{systems}'
        f"[evaluation]\nmetrics = {json.dumps(list(METRICS))}\n",
        encoding="utf-8",
    )
    return config


# -- reading a store ----------------------------------------------------------------------------------------


def _engine(url: str):
    from sqlalchemy import create_engine

    return create_engine(url)


def digest(url: str, *, skip: set[str] = frozenset()) -> str:
    """sha256 over every stored output (system, sample, status, answer, error, its contexts' ids and texts) and
    every metric value with the (system, sample) of the output it is attached to; ids, times and latencies left
    out. Contexts are read whatever their storage form: inline (schema 3) or by key (schema 4), so the digest
    does not depend on it. ``skip``: question ids left out (the hostile endpoint's)."""
    from sqlalchemy import inspect, text

    from ragassay.store.contexts import unpack

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(
                text(
                    "SELECT system, question_id, status, answer, error, output_json FROM outputs "
                    "ORDER BY system, question_id"
                )
            ).all()
            by_key = inspect(conn).has_table("context_texts")
            texts = dict(conn.execute(text("SELECT key, text FROM context_texts")).all()) if by_key else {}
            outputs = [
                (*row[:5], [out.context_ids, out.contexts] if out is not None else None)
                for row in rows
                for out in [unpack(row[5], texts) if row[5] else None]
            ]
            values = conn.execute(
                text(
                    "SELECT o.system, o.question_id, v.metric, v.repeat, v.value, v.unscored_reason "
                    "FROM metric_values v JOIN outputs o ON o.id = v.output_id "
                    "ORDER BY o.system, o.question_id, v.metric, v.repeat"
                )
            ).all()
    finally:
        engine.dispose()
    rows = [list(r) for r in outputs if r[1] not in skip] + [list(r) for r in values if r[1] not in skip]
    return hashlib.sha256(json.dumps(rows, default=repr).encode()).hexdigest()


def count_outputs(url: str) -> int:
    """How many outputs are stored (0 before the database exists)."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(text("SELECT count(*) FROM outputs")).scalar() or 0
    except DBAPIError:
        return 0
    finally:
        engine.dispose()


def run_statuses(url: str) -> list[str]:
    """The raw ``runs.status`` of every stored run (what the runner wrote, before any reader interprets it)."""
    from sqlalchemy import text

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return [row[0] for row in conn.execute(text("SELECT status FROM runs ORDER BY created_at"))]
    finally:
        engine.dispose()


def status_problems(url: str) -> list[str]:
    """A run that stopped before its work was done must not be stored as ``complete`` (``interrupted`` when its
    end could be recorded; ``running`` when the database could not take even that)."""
    statuses = run_statuses(url)
    if len(statuses) == 1 and statuses[0] in ("interrupted", "running"):
        return []
    return [f"runs.status is {statuses} after the stop, not ['interrupted'] (or ['running'] when it was down)"]


def integrity_problems(url: str) -> list[str]:
    """Broken atomicity: an output without all its metric values, a value of no output, a damaged file."""
    from sqlalchemy import text

    engine = _engine(url)
    problems = []
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "sqlite":
                check = conn.execute(text("PRAGMA integrity_check")).scalar()
                if check != "ok":
                    problems.append(f"integrity_check: {check}")
            partial = conn.execute(
                text(
                    "SELECT count(*) FROM outputs o WHERE o.status = 'ok' AND "
                    "(SELECT count(*) FROM metric_values v WHERE v.output_id = o.id) != :n"
                ),
                {"n": len(METRICS)},
            ).scalar()
            if partial:
                problems.append(f"{partial} stored output(s) without exactly {len(METRICS)} metric values")
            orphans = conn.execute(
                text("SELECT count(*) FROM metric_values WHERE output_id NOT IN (SELECT id FROM outputs)")
            ).scalar()
            if orphans:
                problems.append(f"{orphans} metric value(s) of no output")
    finally:
        engine.dispose()
    return problems


# -- running ragassay -----------------------------------------------------------------------------------------


def environment(**extra: str) -> dict[str, str]:
    """The environment of a child ``ragassay``: no RAGASSAY_* settings of the caller."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGASSAY_") or k == "RAGASSAY_PLUGIN_INDEX"}
    env.update(extra)
    return env


def command(config: Path, *args: str, fault: dict[str, Any] | None = None) -> list[str]:
    """The command line of ``ragassay run CONFIG -q ARGS`` (through this script when a fault is armed)."""
    cli = ["run", str(config), "-q", *args]
    if fault is None:
        return [sys.executable, "-m", "ragassay", *cli]
    return [sys.executable, str(HERE), "child", json.dumps(fault), *cli]


def ragassay(config: Path, *args: str, fault: dict[str, Any] | None = None, **popen: Any):
    """Run ``ragassay run`` to its end; returns the CompletedProcess (text output)."""
    popen.setdefault("env", environment())
    return subprocess.run(
        command(config, *args, fault=fault), capture_output=True, text=True, timeout=RUN_TIMEOUT_S, **popen
    )


def cli(*args: str, **popen: Any):
    """Any other ragassay command (``runs``, ``show``, ...)."""
    popen.setdefault("env", environment())
    return subprocess.run(
        [sys.executable, "-m", "ragassay", *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S, **popen
    )


def error_line(stderr: str) -> tuple[str, list[str]]:
    """The ``error:`` line of a failed command and what is wrong with how it failed (more than one error line,
    a traceback, SQL or parameters shown)."""
    lines = [line for line in stderr.splitlines() if line.startswith("error:")]
    problems = []
    if len(lines) != 1:
        problems.append(f"{len(lines)} error lines, not 1: {stderr[-600:]!r}")
    if "Traceback" in stderr:
        problems.append("a traceback was shown")
    for word in ("[SQL", "INSERT INTO", "SELECT ", "parameters:"):
        if word in stderr:
            problems.append(f"the SQL was shown ({word.strip()})")
    return (lines[0] if lines else ""), problems


def kill_points(seed: int = 21, count: int = 5) -> list[dict[str, Any]]:
    """``count`` seeded kill points spread over the run (in stored units), each at another phase of a write."""
    rng = random.Random(seed)
    units = SAMPLES * len(SYSTEMS)
    phases = ["outputs", "values", "commit", "after", "outputs"]
    return [
        {"after_units": rng.randrange(units * k // count + 1, units * (k + 1) // count), "phase": phases[k % 5]}
        for k in range(count)
    ]


# -- the child: arm one fault, run the CLI ------------------------------------------------------------------------


def arm(fault: dict[str, Any]) -> None:
    """Make the write of the batch holding unit ``fault["after_units"]`` fire ``fault["action"]`` (``kill``:
    SIGKILL this process; ``pause``: tell the parent through ``fault["paused"]`` (a file) and wait for
    ``fault["resume"]`` to appear) at ``fault["phase"]``."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    from ragassay.store.database import ResultsStore

    state = {"written": 0, "armed": False, "fired": False}

    def fire() -> None:
        state["fired"], state["armed"] = True, False
        if fault["action"] == "kill":
            os.kill(os.getpid(), 9)
        Path(fault["paused"]).write_text("paused")
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while not Path(fault["resume"]).exists() and time.monotonic() < deadline:
            time.sleep(0.02)

    @event.listens_for(Engine, "after_cursor_execute")
    def _statement(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001
        table = {"outputs": "INSERT INTO outputs", "values": "INSERT INTO metric_values"}.get(fault["phase"])
        if state["armed"] and table and statement.startswith(table):
            fire()

    @event.listens_for(Engine, "commit")
    def _commit(conn):  # noqa: ANN001
        if state["armed"] and fault["phase"] == "commit":
            fire()

    original = ResultsStore.write_units

    def write_units(self, run_id, results, *args, **kwargs):  # noqa: ANN001
        before = state["written"]
        state["written"] += len(results)
        state["armed"] = not state["fired"] and before < fault["after_units"] <= state["written"]
        original(self, run_id, results, *args, **kwargs)
        if state["armed"]:  # the "after" phase, or a phase this batch had no statement for
            fire()

    ResultsStore.write_units = write_units


def child(argv: list[str]) -> None:
    """``child FAULT_JSON ARGS...``: arm the fault, then ``ragassay ARGS...`` in this process."""
    arm(json.loads(argv[0]))
    from ragassay.cli.main import main

    main(argv[1:])


if __name__ == "__main__" and sys.argv[1:2] == ["child"]:
    child(sys.argv[2:])
