"""Shared fixtures: a small real project on disk, and an in-process test plugin ('testkit').

The testkit components are scripted systems on the far side of the runner (they stand in for a user's RAG
system); the runner, store, config and metrics under test are always the real ones.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import tempfile
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ragassay import hookimpl
from ragassay.components import Metric, RAGSystem
from ragassay.models import RAGOutput
from ragassay.plugin_manager import load_plugins

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# The plugin index (ragassay.plugin_index) of this test session: ragassay commands the tests start find it
# through the environment, and the user's own cache folder is left alone.
_PLUGIN_INDEX = tempfile.mkdtemp(prefix="ragassay-test-plugin-index-")
atexit.register(shutil.rmtree, _PLUGIN_INDEX, True)
os.environ.setdefault("RAGASSAY_PLUGIN_INDEX", os.path.join(_PLUGIN_INDEX, "index.json"))


class EchoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fail_ids: list[str] = Field(default_factory=list, description="question_ids to fail on.")
    delay_s: float = Field(0.0, description="Sleep before answering.")
    answer: str | None = Field(None, description="Fixed answer; default: the first reference answer.")
    wrong_ids: list[str] = Field(default_factory=list, description="question_ids answered 'no idea'.")
    held_ids: list[str] = Field(default_factory=list, description="question_ids answered once release_file exists.")
    release_file: str | None = Field(None, description="Path whose existence releases the held question_ids.")


class EchoRAG(RAGSystem):
    """Answers with the sample's first reference answer and its reference contexts (scripted)."""

    name = "echo"
    Options = EchoOptions
    calls = 0

    async def answer(self, sample):
        type(self).calls += 1
        if self.options.delay_s:
            await asyncio.sleep(self.options.delay_s)
        if sample.question_id in self.options.held_ids:  # a test decides when (progress, not time)
            for _ in range(30_000):  # a hang guard of 10 minutes, never reached in a passing test
                if Path(self.options.release_file).exists():
                    break
                await asyncio.sleep(0.02)
        if sample.question_id in self.options.fail_ids:
            raise RuntimeError(f"scripted failure on {sample.question_id}")
        answer = self.options.answer if self.options.answer is not None else (sample.reference_answers or [""])[0]
        if sample.question_id in self.options.wrong_ids:
            answer = "no idea"
        return RAGOutput(
            answer=answer,
            contexts=list(sample.reference_contexts),
            context_ids=list(sample.reference_context_ids),
            retrieved=True,
        )


class ExplodingMetric(Metric):
    """Raises on every output (to test that metric errors are recorded, not fatal)."""

    name = "explode"

    def score(self, sample, output):
        raise ValueError("boom")


class NanMetric(Metric):
    """Returns NaN (to test that NaN never reaches the store)."""

    name = "nan"

    def score(self, sample, output):
        return float("nan")


class Testkit:
    @hookimpl
    def register_rags(self, register):
        register(EchoRAG)

    @hookimpl
    def register_metrics(self, register):
        register(ExplodingMetric)
        register(NanMetric)


@pytest.fixture
def host():
    """Entry-point plugins plus the in-process testkit plugin."""
    EchoRAG.calls = 0
    return load_plugins([("testkit", Testkit())])


DOCS = {
    "alpha.md": "# Alpha\n\nThe alpha reactor was built in 1999 by Ada Lovelace Labs. It produces steam.\n",
    "beta.md": "# Beta\n\nBeta is a river in Zürich. O'Brien fished salmon there every spring.\n",
    "gamma.txt": "Gamma rays are photons of very high energy. They come from radioactive decay.\n",
}

QA = [
    {
        "question_id": "q1",
        "question": "Who built the alpha reactor?",
        "reference_answers": ["Ada Lovelace Labs"],
        "reference_context_ids": ["corpus/alpha.md"],
        "reference_contexts": ["The alpha reactor was built in 1999"],
    },
    {
        "question_id": "q2",
        "question": "Who fished salmon in the Beta river?",
        "reference_answers": ["O'Brien"],
        "reference_context_ids": ["corpus/beta.md"],
        "reference_contexts": ["O'Brien fished salmon there"],
    },
    {
        "question_id": "q3",
        "question": "Where do gamma rays come from?",
        "reference_answers": ["radioactive decay"],
        "reference_context_ids": ["corpus/gamma.txt"],
        "reference_contexts": ["They come from radioactive decay."],
    },
]


def write_project(root: Path, config: str, qa=QA, docs=DOCS) -> Path:
    """Write corpus/, qa.jsonl and ragassay.toml under ``root``; returns the config path."""
    (root / "corpus").mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (root / "corpus" / name).write_text(text, encoding="utf-8")
    (root / "qa.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in qa), encoding="utf-8")
    path = root / "ragassay.toml"
    path.write_text(textwrap.dedent(config), encoding="utf-8")
    return path


BASIC_CONFIG = """
    [project]
    name = "t"
    concurrency = 4

    [corpus]
    paths = ["corpus/*"]

    [dataset]
    options = { path = "qa.jsonl" }

    [defaults]
    chunker = { name = "recursive", options = { size = 200, overlap = 20 } }

    [systems.keyword]
    retriever = "keyword"
    generator = "extractive"
    options = { top_k = 2 }

    [systems.bm25]
    extends = "keyword"
    retriever = "bm25"

    [evaluation]
    judges = ["match"]
"""


@pytest.fixture
def project(tmp_path) -> Path:
    """A real project (3 documents, 3 questions, keyword vs BM25) on disk."""
    return write_project(tmp_path, BASIC_CONFIG)


PACKAGES = REPO / "tests" / "packages"


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory) -> Path:
    """The example and the broken plugin packages, really pip-installed into a folder of their own.

    Commands that should see them run with ``PYTHONPATH`` set to this folder (see :func:`cli_env`).
    """
    import subprocess
    import sys

    target = tmp_path_factory.mktemp("plugin-site")
    for package in ("ragassay_example_plugin", "ragassay_broken_plugin"):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "install",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
                "--no-cache-dir",
                "--target",
                str(target),
                str(PACKAGES / package),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
    return target


def cli_env(plugin_site: Path | None = None, **extra: str) -> dict[str, str]:
    """Environment for running the real ``ragassay`` CLI in a subprocess."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGASSAY_") or k == "RAGASSAY_PLUGIN_INDEX"}
    if plugin_site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_site), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


def ragassay_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None, timeout: float = 240):
    """Run the installed ragassay CLI (python -m ragassay) and return the CompletedProcess."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "ragassay", *args],
        env=env or cli_env(),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# Real servers, one of each per test session (started on first use, stopped at the end): a throwaway
# PostgreSQL (``postgres_server``, and a fresh database per test: ``postgres_url``) and a local Ray cluster.
from postgres_server import make_postgres_server_fixture, make_postgres_url_fixture  # noqa: E402
from ray_cluster import make_ray_cluster_fixture  # noqa: E402

postgres_server = make_postgres_server_fixture()
postgres_url = make_postgres_url_fixture()
ray_cluster = make_ray_cluster_fixture()
