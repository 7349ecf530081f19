"""A new user's bad input to the commands of the third wave, through the real CLI in subprocesses: a missing
extra (the packages hidden from the interpreter the way a fresh ``pip install -e .[local,dense]`` lacks them), a
busy port, garbage given as a trace or labels file. Each is one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from conftest import BASIC_CONFIG, REPO, cli_env, ragassay_cli, write_project

#: What a fresh ``pip install -e .[local,dense]`` lacks: the packages of the serve, label and traces extras.
NOT_INSTALLED = "starlette,uvicorn,itsdangerous,multipart,python_multipart,opentelemetry,google.protobuf,google.rpc"

#: A ``sitecustomize`` that makes the modules of $HIDDEN_MODULES (and below) impossible to import, as if their
#: distributions were not installed (the interpreter imports it at start from PYTHONPATH).
HIDING = textwrap.dedent(
    """
    import os, sys

    HIDDEN = tuple(filter(None, os.environ.get("HIDDEN_MODULES", "").split(",")))


    class NotInstalled:
        def find_spec(self, name, path=None, target=None):
            if any(name == hidden or name.startswith(hidden + ".") for hidden in HIDDEN):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None


    sys.meta_path.insert(0, NotInstalled())
    """
)


@pytest.fixture(scope="module")
def hidden_env(tmp_path_factory):
    """The CLI's environment with the packages of the serve, label and traces extras not importable."""
    folder = tmp_path_factory.mktemp("not-installed")
    (folder / "sitecustomize.py").write_text(HIDING, encoding="utf-8")
    return cli_env(PYTHONPATH=str(folder), HIDDEN_MODULES=NOT_INSTALLED)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project with one stored run (keyword vs BM25 on 3 questions): (config path, database path, run id)."""
    root = tmp_path_factory.mktemp("serving-project")
    config = write_project(root, BASIC_CONFIG)
    result = ragassay_cli("run", str(config), "-q")
    assert result.returncode == 0, result.stderr
    import sqlite3

    db = root / "ragassay-results.db"
    with sqlite3.connect(db) as con:
        (run_id,) = con.execute("select id from runs").fetchone()
    return config, db, run_id


def one_line_exit_2(result, *words: str) -> str:
    """The single ``error:`` line of a command that refused its input (exit 2, no traceback)."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


@pytest.mark.parametrize(
    "args, extra",
    [
        (["serve"], "serve"),
        (["label", "RUN", "--rubric", "correct", "--annotator", "a"], "label"),
        (["traces", "import", "TRACES"], "traces"),
        (["traces", "receive", "--port", "0"], "traces"),
        (["traces", "export-evals", "RUN", "--otlp", "OUT"], "traces"),
    ],
)
def test_a_missing_extra_names_it(project, hidden_env, tmp_path, args, extra):
    config, _, run_id = project
    (tmp_path / "t.json").write_text("{}", encoding="utf-8")
    names = {"RUN": run_id, "TRACES": str(tmp_path / "t.json"), "OUT": str(tmp_path / "e.json")}
    args = [names.get(a, a) for a in args]
    result = ragassay_cli(*args, "--config", str(config), env=hidden_env)
    one_line_exit_2(result, f"pip install 'ragassay[{extra}]'", f"'{extra}' extra")
    assert not (tmp_path / "e.json").exists()


def test_a_command_meeting_a_missing_optional_package_names_its_extra(hidden_env):
    """A command that does not check its extra first is caught by the group: a missing package of an extra is the
    user's to install (exit 2), not an internal error."""
    code = (
        "import sys, click\nfrom ragassay.cli.main import cli, main\n"
        "@click.command('needs-uvicorn')\ndef needs():\n    import uvicorn\n"
        "cli.add_command(needs)\nmain(['needs-uvicorn'])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env=hidden_env, capture_output=True, text=True, timeout=240)
    one_line_exit_2(result, "ragassay needs-uvicorn needs the 'serve' extra", "missing: uvicorn")
    bug = code.replace("import uvicorn", "import uvicorn.no_such_module").replace("needs-uvicorn", "bug")
    result = subprocess.run([sys.executable, "-c", bug], env=cli_env(), capture_output=True, text=True, timeout=240)
    assert result.returncode == 1 and "internal error: ModuleNotFoundError" in result.stderr  # a bug stays a bug


def test_the_extras_the_commands_name_are_those_of_pyproject():
    """Every module of :data:`ragassay.cli.extras.EXTRAS` comes from a distribution that its extra installs."""
    import importlib.metadata
    import re

    from ragassay.cli.extras import EXTRAS

    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]

    def installs(extra: str) -> set[str]:
        names = set()
        for requirement in declared[extra]:
            name = re.split(r"[<>=\[; ]", requirement, maxsplit=1)[0].lower().replace("_", "-")
            names |= installs(requirement[len("ragassay[") : -1]) if name == "ragassay" else {name}
        return names

    distributions = importlib.metadata.packages_distributions()
    assert set(EXTRAS) <= set(declared)
    for extra, modules in EXTRAS.items():
        for module in modules:
            found = {d.lower().replace("_", "-") for d in distributions.get(module.split(".")[0], [])}
            assert found & installs(extra), (extra, module, found)


@pytest.fixture
def busy_port():
    """A port of 127.0.0.1 that another program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


@pytest.mark.parametrize("command", ["serve", "label", "receive"])
def test_a_busy_port_is_one_line_before_any_url(project, busy_port, command):
    config, db, run_id = project
    args = {
        "serve": ["serve"],
        "label": ["label", run_id, "--rubric", "correct", "--annotator", "a"],
        "receive": ["traces", "receive"],
    }[command]
    result = ragassay_cli(*args, "--port", str(busy_port), "--config", str(config), timeout=120)
    one_line_exit_2(result, f"port {busy_port} on 127.0.0.1 is in use", "--port")
    assert "http://" not in result.stdout + result.stderr.split("error:")[0]


def _garbage_files(folder: Path) -> dict[str, tuple[Path, tuple[str, ...]]]:
    noise = random.Random(38).randbytes(200_000)
    files = {
        "random bytes as .pb": ("noise.pb", noise, ("noise.pb, message 1", "OTLP protobuf file")),
        "text as .pb": ("text.pb", b"hello, not protobuf\n", ("text.pb", "OTLP protobuf file")),
        "random bytes as .json": ("noise.json", noise, ("noise.json", "not UTF-8", "OTLP JSON file")),
        "text as .jsonl": ("text.jsonl", b"hello\n", ("text.jsonl", "invalid JSON", "OTLP JSON file")),
        "2 KB of nested arrays": ("deep.json", b"[" * 1000 + b"]" * 1000, ("deep.json, line 1", "nested too deeply")),
        "nested inside a request": (
            "deep.jsonl",
            b'{"resourceSpans": ' + b"[" * 1000 + b"]" * 1000 + b"}\n",
            ("deep.jsonl, line 1", "nested too deeply"),
        ),
    }
    out = {}
    for case, (name, data, words) in files.items():
        (folder / name).write_bytes(data)
        out[case] = (folder / name, words)
    return out


def test_garbage_as_a_trace_file_is_one_line_naming_the_file(tmp_path):
    db = tmp_path / "traces.db"
    for case, (path, words) in _garbage_files(tmp_path).items():
        result = ragassay_cli("traces", "import", str(path), "--db", str(db), "--no-check")
        line = one_line_exit_2(result, *words)
        assert len(line) < 600, (case, line)  # the decoder's message is shortened, not the payload quoted whole


def test_deeply_nested_json_in_a_labels_file_names_its_line(project, tmp_path):
    config, _, _ = project
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n" + "[" * 1000 + "]" * 1000 + "\n", encoding="utf-8")
    result = ragassay_cli("labels", "import", str(labels), "--config", str(config))
    one_line_exit_2(result, f"{labels}:2", "nested too deeply")
