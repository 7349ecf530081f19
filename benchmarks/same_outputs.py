"""Do two revisions of ragassay print, write and serve the same bytes on the examples?

A redesign that changes no behaviour must leave every number and page as it was. This script checks that from
outside: it installs the base revision (a git worktree, in a virtual environment that shares this environment's
packages) beside the working tree, then for each example

- runs it once with each revision and compares what each stored (outputs, contexts, metric values, judgements;
  run ids, timestamps and latencies left out: they differ between any two runs);
- renders the base revision's stored run with each revision (``compare`` and ``report`` in every format and at
  80 and 120 columns, ``report --html``, ``show``, ``runs``, ``breakdown``, ``cost``, ``decisions``) and every
  page of ``ragassay serve``, and compares the bytes.

Run from the repository root (minutes: the Aurp example runs its dense systems on the CPU once per revision)::

    python benchmarks/same_outputs.py --base cae9ec0
    python benchmarks/same_outputs.py --base cae9ec0 --examples quickstart,top_k --keep /tmp/same

It prints one line per comparison and exits 1 when anything differs (the first differing lines are shown).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = ["quickstart", "top_k", "own_rag", "aurp"]
#: Keys of a stored output's JSON that measure time, not behaviour.
TIMING_KEYS = {"latency_s", "created_at", "updated_at", "elapsed_s", "started_at", "seconds"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the revision to compare the working tree with")
    parser.add_argument("--examples", default=",".join(EXAMPLES), help="comma-separated example folders")
    parser.add_argument("--keep", type=Path, help="keep the work folder here (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="same-outputs-"))
    work.mkdir(parents=True, exist_ok=True)
    base_python = install_base(args.base, work)
    sides = {"base": (base_python, work / "base-tree"), "head": (Path(sys.executable), REPO)}
    differences = 0
    for example in args.examples.split(","):
        differences += compare_example(example, sides, work)
    print(f"\n{differences} difference(s)" if differences else "\nsame bytes everywhere")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], cwd=REPO, check=False)
    return 1 if differences else 0


def install_base(revision: str, work: Path) -> Path:
    """A worktree of ``revision`` installed (editable, no dependencies) in a venv over this environment's
    packages; returns its python."""
    tree, venv = work / "base-tree", work / "base-venv"
    if not tree.exists():
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), revision], cwd=REPO, check=True)
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(tree)],
            check=True,
        )
    return python


def ragassay(python: Path, args: list[str], cwd: Path, columns: int = 120, env: dict | None = None):
    environment = {**os.environ, "COLUMNS": str(columns), "PYTHONHASHSEED": "0", **(env or {})}
    environment.pop("FORCE_COLOR", None)
    result = subprocess.run(
        [str(python), "-m", "ragassay", *args], cwd=cwd, env=environment, capture_output=True, text=True
    )
    return result.returncode, result.stdout, result.stderr


def compare_example(example: str, sides: dict, work: Path) -> int:
    differences = 0
    folders = {}
    for side, (python, tree) in sides.items():
        folder = work / side / example
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(tree / "examples" / example, folder, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
        started = time.monotonic()
        code, _out, err = ragassay(python, ["run", str(folder), "-q"], cwd=folder)
        print(f"{example}: {side} run exit {code} in {time.monotonic() - started:.0f} s")
        if code not in (0, 3):
            print(err[-2000:])
        folders[side] = folder
    differences += report("stored rows", example, stored(folders["base"]), stored(folders["head"]))
    # Render the base's stored run with both revisions, from the same folder and file (paths show in outputs).
    rendered = {}
    for side, (python, _tree) in sides.items():
        render = work / "render"
        shutil.rmtree(render, ignore_errors=True)
        render.mkdir()
        _copy_database(folders["base"] / "ragassay-results.db", render / "results.db")
        rendered[side] = render_all(python, render / "results.db", render)
        _keep(work / side / f"{example}-rendered", rendered[side])
    for name in rendered["base"]:
        differences += report(name, example, rendered["base"][name], rendered["head"].get(name, "<missing>"))
    return differences


def _copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a SQLite file (its write-ahead log included)."""
    with sqlite3.connect(source) as reading, sqlite3.connect(target) as writing:
        reading.backup(writing)
    reading.close()
    writing.close()


def _keep(folder: Path, rendered: dict[str, str]) -> None:
    """Each rendering as a file, to read when something differs."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in rendered.items():
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        (folder / f"{safe}.txt").write_text(text)


def stored(folder: Path) -> str:
    """What a run stored, in a stable order, without ids, timestamps and latencies."""
    db = sqlite3.connect(folder / "ragassay-results.db")
    lines = []
    outputs = db.execute(
        "select id, system, question_id, status, error, answer, output_json, input_tokens, output_tokens, retrieved,"
        " retrieved_count from outputs order by system, question_id"
    ).fetchall()
    for row in outputs:
        payload = _without_timings(json.loads(row[6])) if row[6] else None
        lines.append(json.dumps([*row[1:6], payload, *row[7:]], sort_keys=True))
        for value in db.execute(
            "select metric, repeat, value, unscored_reason, details_json, input_tokens, output_tokens"
            " from metric_values where output_id = ? order by metric, repeat",
            (row[0],),
        ):
            lines.append("  " + json.dumps(value))
        for judgement in db.execute(
            "select judge, repeat, verdict, score, explanation, details_json from judgements where output_id = ?"
            " order by judge, repeat",
            (row[0],),
        ):
            lines.append("  " + json.dumps(judgement))
    texts = db.execute("select key, text from context_texts order by key").fetchall()
    lines += [json.dumps(text) for text in texts]
    db.close()
    return "\n".join(lines)


def _without_timings(value):
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def render_all(python: Path, db: Path, folder: Path) -> dict[str, str]:
    """Every rendering of the stored run in ``db`` by one revision: name -> text."""
    out: dict[str, str] = {}
    connection = sqlite3.connect(db)
    run_id = connection.execute("select id from runs order by created_at desc limit 1").fetchone()[0]
    questions = [
        q
        for (q,) in connection.execute(
            "select question_id from run_samples where run_id = ? order by position limit 3", (run_id,)
        )
    ]
    connection.close()
    commands = {"runs": ["runs"], "runs json": ["runs", "--format", "json"]}
    for fmt in ("rich", "json", "csv", "markdown"):
        commands[f"compare {fmt}"] = ["compare", run_id, "--format", fmt]
        commands[f"report {fmt}"] = ["report", run_id, "--format", fmt]
    for table in ("pairs", "verdicts", "latency", "breakdowns", "cost", "groups", "blame"):
        commands[f"report csv {table}"] = ["report", run_id, "--format", "csv", "--table", table]
    commands["cost"] = ["cost", run_id]
    commands["decisions"] = ["decisions", run_id]
    for question in questions:
        commands[f"show {question}"] = ["show", run_id, question]
        commands[f"show {question} json"] = ["show", run_id, question, "--format", "json"]
    for name, args in commands.items():
        for columns in (80, 120):
            code, stdout, stderr = ragassay(python, [*args, "--db", str(db)], cwd=folder, columns=columns)
            out[f"{name} @{columns}"] = f"exit {code}\n{stdout}\n--- stderr\n{stderr}"
    html = folder / "report.html"
    code, _stdout, stderr = ragassay(python, ["report", run_id, "--db", str(db), "--html", str(html)], cwd=folder)
    out["report --html"] = f"exit {code}\n{stderr}\n" + (html.read_text() if html.exists() else "<none>")
    out.update(serve_pages(python, db, folder, run_id, questions))
    return out


def serve_pages(python: Path, db: Path, folder: Path, run_id: str, questions: list[str]) -> dict[str, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    environment = {**os.environ, "PYTHONHASHSEED": "0"}
    server = subprocess.Popen(
        [str(python), "-m", "ragassay", "serve", "--db", str(db), "--port", str(port)],
        cwd=folder,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pages = (
        ["/", f"/runs/{run_id}"]
        + [f"/runs/{run_id}/{tab}" for tab in ("breakdowns", "cost", "robustness", "drift", "failures")]
        + [f"/runs/{run_id}/samples/{q}" for q in questions]
        + [f"/runs/{run_id}?seed=1&alpha=0.1"]
    )
    out = {}
    try:
        _wait_for(port)
        for page in pages:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{page}", timeout=600) as response:
                    out[f"serve {page.replace(run_id, 'RUN')}"] = f"{response.status}\n{response.read().decode()}"
            except urllib.error.HTTPError as error:
                out[f"serve {page.replace(run_id, 'RUN')}"] = f"{error.code}\n{error.read().decode()}"
    finally:
        server.terminate()
        server.wait(timeout=60)
    return out


def _wait_for(port: int, limit_s: float = 120) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit(f"ragassay serve did not listen on port {port} within {limit_s:.0f} s")


def report(name: str, example: str, base: str, head: str) -> int:
    if base == head:
        print(f"{example}: {name}: same ({len(base.encode())} bytes)")
        return 0
    print(f"{example}: {name}: DIFFERENT")
    diff = difflib.unified_diff(base.splitlines(), head.splitlines(), "base", "head", lineterm="", n=1)
    for line in list(diff)[:30]:
        print("    " + line[:200])
    return 1


if __name__ == "__main__":
    sys.exit(main())
