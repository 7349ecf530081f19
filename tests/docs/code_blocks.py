"""The code blocks of a Markdown page, and how each kind is executed (the conventions in docs/index.md).

A block's info string is its language, optionally followed by ``norun="why it cannot run in a test"``:
````
```bash norun="needs a Ray cluster"
````
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from ragassay.config import load_config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: Languages whose blocks are parsed or run; ``text`` blocks are output shown to readers and are skipped.
RUNNABLE = ("python", "bash", "console", "toml", "json", "yaml")
LANGUAGES = (*RUNNABLE, "text")
BLOCK_TIMEOUT_S = 120
NORUN_HINT = 'if it truly cannot run in a test, say why in its info string: ```bash norun="needs a Ray cluster"'


@dataclasses.dataclass
class Block:
    """One fenced code block: where it is, its language, attributes and code."""

    page: str
    line: int
    language: str
    attributes: dict[str, str]
    code: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line} ({self.language or 'no language'} block)"


def read_blocks(path: Path, page: str) -> list[Block]:
    """Every fenced block of a Markdown page, in order (indented fences inside lists included)."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    blocks = []
    for token in tokens:
        if token.type != "fence":
            continue
        words = shlex.split(token.info) if token.info.strip() else [""]
        attributes = dict(word.partition("=")[::2] for word in words[1:])
        blocks.append(Block(page, token.map[0] + 1, words[0], attributes, token.content))
    return blocks


def problem_with_info(block: Block) -> str | None:
    """Why a block's info string breaks the conventions, or None."""
    if block.language not in LANGUAGES:
        return f"{block.where}: unknown language {block.language!r}; use one of {', '.join(LANGUAGES)}"
    unknown = set(block.attributes) - {"norun"}
    if unknown:
        return f'{block.where}: unknown attribute(s) {", ".join(sorted(unknown))}; only norun="reason" is known'
    if "norun" in block.attributes and not block.attributes["norun"].strip():
        return f'{block.where}: norun needs a reason: norun="needs an API key"'
    return None


def offline_environment() -> dict[str, str]:
    """The environment blocks run in: no API keys, model hubs offline, this interpreter's scripts on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def run_python(block: Block, namespace: dict, folder: Path) -> None:
    """Execute a python block in the page's namespace (the working directory is ``folder``)."""
    exec(compile(block.code, block.where, "exec"), namespace)  # noqa: S102 - the docs' own code


def run_shell(block: Block, folder: Path) -> None:
    """Run a bash block, or the ``$ `` lines of a console block, with bash in ``folder``."""
    script = block.code
    if block.language == "console":
        script = "\n".join(line[2:] for line in block.code.splitlines() if line.startswith("$ "))
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=folder,
        env=offline_environment(),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{block.where} exited with {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )


def is_whole_config(code: str) -> bool:
    """A ragassay config (``[systems.`` or ``[project]``), not a package's pyproject.toml (``[build-system]``)."""
    return ("[systems." in code or "[project]" in code) and "[build-system]" not in code


def check_toml(block: Block, folder: Path) -> None:
    """Parse a toml block; validate a whole config with the config loader."""
    data = tomllib.loads(block.code)
    if "[build-system]" in block.code and "ragassay" in data.get("tool", {}):
        path = folder / "pyproject.toml"
        path.write_text(block.code, encoding="utf-8")
        load_config(path)
    elif is_whole_config(block.code):
        path = folder / f"docs-block-{block.line}.toml"
        path.write_text(block.code, encoding="utf-8")
        load_config(path)


def run_block(block: Block, namespace: dict, folder: Path) -> None:
    """Execute, parse or validate one block according to its language."""
    if block.language == "python":
        run_python(block, namespace, folder)
    elif block.language in ("bash", "console"):
        run_shell(block, folder)
    elif block.language == "toml":
        check_toml(block, folder)
    elif block.language == "json":
        json.loads(block.code)
    elif block.language == "yaml":
        yaml.safe_load(block.code)
