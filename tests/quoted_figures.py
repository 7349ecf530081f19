"""Figures quoted in the READMEs and docs, checked against a fresh run of the commands that printed them.

A quoted output is marked in the Markdown by a comment on the line before it, naming the commands (run from the
repository root, ``;`` between them; ``RUN`` stands for the id of the run the last ``ragassay run`` made)::

    <!-- output of: ragassay run examples/top_k; ragassay gate examples/top_k/top1.toml --baseline RUN -->
    ```text
    ...
    ```

The block (a fenced block, or a Markdown table) must appear in what the commands print, stdout and stderr, in
order: both are cut into words (box-drawing characters and spacing dropped, so table widths and line wrapping do
not matter), ``...`` in the quote stands for anything, and the machine-dependent words are masked on both sides:
run ids, durations (``34.6s``) and numbers with 4 or more decimals (latencies, in this project's tables).
Everything else, every mean, interval, count and verdict, must be printed as quoted.

Shared by ``tests/examples/test_quoted_figures.py`` (the fast examples, and the lexical systems of Aurp) and
``benchmarks/example_figures.py`` (every quote, Aurp's dense systems included).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MARK = re.compile(r"^<!--\s*output of:\s*(.*?)\s*-->\s*$")
MASKS = [
    (re.compile(r"\b[0-9a-f]{8,16}\b"), "RUN"),  # run ids, short and long
    (re.compile(r"\b\d+(\.\d+)?s\b"), "#s"),  # durations
    (re.compile(r"\d+\.\d{4,}"), "#"),  # latencies (and costs) in seconds and dollars
]
BOX = re.compile(r"[\u2500-\u257f]")
ELLIPSIS = "..."


@dataclasses.dataclass(frozen=True)
class Quote:
    """One quoted output: where it is, the commands that print it, and its text."""

    page: str
    line: int
    commands: list[str]
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The Markdown pages that may quote output: README.md, every example's README.md, docs/*.md."""
    return [REPO / "README.md", *sorted(REPO.glob("examples/*/README.md")), *sorted(REPO.glob("docs/*.md"))]


def quotes(path: Path) -> list[Quote]:
    """Every marked quote of a page, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for index, line in enumerate(lines):
        mark = MARK.match(line.strip())
        if mark is None:
            continue
        commands = [c.strip() for c in mark.group(1).split(";") if c.strip()]
        start = index + 1
        if start < len(lines) and lines[start].lstrip().startswith("```"):
            end = next(i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("```"))
            body = lines[start + 1 : end]
        else:
            end = next((i for i in range(start, len(lines)) if not lines[i].lstrip().startswith("|")), len(lines))
            body = lines[start:end]
        page = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
        found.append(Quote(page, start + 1, commands, "\n".join(body)))
    return found


def words(text: str) -> list[str]:
    """``text`` as words, machine-dependent ones masked (module docstring)."""
    text = BOX.sub(" ", text)
    for pattern, mask in MASKS:
        text = pattern.sub(mask, text)
    return text.split()


def missing(quoted: str, printed: str) -> list[str]:
    """The parts of ``quoted`` (split at ``...``) not found in ``printed`` in order, each as its words."""
    have = words(printed)
    problems, at = [], 0
    for part in _parts(words(quoted)):
        found = _find(have, part, at)
        if found is None:
            problems.append(" ".join(part))
        else:
            at = found + len(part)
    return problems


def _parts(tokens: list[str]) -> list[list[str]]:
    parts, current = [], []
    for token in tokens:
        if token == ELLIPSIS:
            parts.append(current)
            current = []
        else:
            current.append(token)
    return [p for p in [*parts, current] if p]


def _find(have: list[str], part: list[str], start: int) -> int | None:
    first, size = part[0], len(part)
    for i in range(start, len(have) - size + 1):
        if have[i] == first and have[i : i + size] == part:
            return i
    return None


def copy_example(name: str, root: Path) -> Path:
    """``examples/NAME`` copied under ``root/examples/`` without results, caches or bytecode."""
    target = root / "examples" / name
    shutil.copytree(
        REPO / "examples" / name,
        target,
        ignore=shutil.ignore_patterns("*.db", "*.db-*", "__pycache__", ".ragassay-cache", "my-eval"),
    )
    return target


@dataclasses.dataclass
class Session:
    """Commands run in one folder (a copy of the examples), each once: a command run again answers what it printed
    the first time, so quotes of one run share it."""

    root: Path
    printed: dict[str, str] = dataclasses.field(default_factory=dict)
    seconds: dict[str, float] = dataclasses.field(default_factory=dict)  # each command's wall clock time
    run_id: str = ""

    def output(self, commands: list[str]) -> str:
        """What ``commands`` print, in order (each run once per session)."""
        return "\n".join(self._one(command) for command in commands)

    def _one(self, command: str) -> str:
        if command not in self.printed:
            line = command.replace("RUN", self.run_id)
            if line.startswith("ragassay "):
                line = f"{sys.executable} -m ragassay {line[len('ragassay ') :]}"
            start = time.perf_counter()
            done = subprocess.run(
                line, shell=True, cwd=self.root, env=_environment(), capture_output=True, text=True, timeout=1800
            )
            self.seconds[command] = time.perf_counter() - start
            text = done.stdout + "\n" + done.stderr
            if done.returncode not in (0, 1):  # the gate exits 1 when it fails, as quoted
                raise AssertionError(f"{command} exited with {done.returncode}\n{text}")
            started = re.search(r"\brun ([0-9a-f]{16})\b", text)
            if command.startswith("ragassay run") and started:
                self.run_id = started.group(1)
            self.printed[command] = text
        return self.printed[command]


def _environment() -> dict[str, str]:
    """Offline, wide (no table split for width), the same hash seed as the README states does not matter."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", COLUMNS="200", NO_COLOR="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def examples_named(quote: Quote) -> set[str]:
    """The examples a quote's commands use (``examples/NAME``)."""
    return {m for c in quote.commands for m in re.findall(r"examples/(\w+)", c)}


def system_rows(text: str, systems: set[str]) -> str:
    """The table rows of ``systems`` in a quoted rich table (a row and the lines that continue it: the interval
    line below a cell), each part separated by ``...``: what a run of only those systems prints the same."""
    kept, keep = [], False
    for line in text.splitlines():
        row = line.strip()
        if row.startswith("\u2502"):
            cells = [c.strip() for c in row.strip("\u2502").split("\u2502")]
            if cells[0]:  # a new row (an empty first cell continues the row above)
                keep = cells[0] in systems
        else:
            keep = False
        if keep:
            kept.append(line)
        elif kept and kept[-1] != ELLIPSIS:
            kept.append(ELLIPSIS)
    return "\n".join(kept)
