"""Regenerate the generated docs: the configuration and hook references, and the hook list in plugins.md.

python docs/gen/generate.py          # rewrite them
python docs/gen/generate.py --check  # exit 1 and name the stale files (the tests run this)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from config_reference import config_reference  # noqa: E402
from hook_reference import hook_reference_page, with_plugins_section  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent
COMMAND = "python docs/gen/generate.py"


def outputs() -> dict[Path, Callable[[str], str]]:
    """Each generated file -> a function from its current text to its fresh text."""
    return {
        DOCS / "reference" / "config.md": lambda _: config_reference(),
        DOCS / "reference" / "hooks.md": lambda _: hook_reference_page(),
        DOCS / "plugins.md": with_plugins_section,
    }


def stale_files() -> list[Path]:
    """Generated files whose committed text differs from what the generator writes now."""
    stale = []
    for path, fresh in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if fresh(current) != current:
            stale.append(path)
    return stale


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_files()
        for path in stale:
            print(f"{path.relative_to(DOCS.parent)} is stale: run {COMMAND}", file=sys.stderr)
        return 1 if stale else 0
    for path, fresh in outputs().items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fresh(current), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
