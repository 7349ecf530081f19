"""``python tests/watch_launcher.py ARGS``: ``ragassay ARGS`` with the change detection of
:func:`watch_detector.statistics` (the real monitor when installed), for tests that run ``ragassay watch`` as a
process of its own (to kill it with SIGKILL)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from watch_detector import statistics  # noqa: E402

from ragassay.cli import watch_cmd  # noqa: E402
from ragassay.cli.main import main  # noqa: E402

watch_cmd.load_statistics = statistics

if __name__ == "__main__":
    main(sys.argv[1:])
