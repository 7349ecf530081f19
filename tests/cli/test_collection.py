"""``ragassay run`` freezes its long-lived objects for Python's garbage collector in the console script's own
process only (ragassay.cli.collection)."""

from __future__ import annotations

import gc
import subprocess
import sys

from click.testing import CliRunner

from conftest import cli_env

REPORT = """
import atexit, gc, sys
from ragassay.cli.main import main

atexit.register(lambda: print("frozen", gc.get_freeze_count(), "enabled", gc.isenabled()))
main(["run", sys.argv[1], "-q"])
"""


def test_the_console_script_freezes_what_loading_made_and_keeps_collecting(project):
    done = subprocess.run(
        [sys.executable, "-c", REPORT, str(project)], env=cli_env(), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    _, frozen, _, enabled = done.stdout.split()
    assert int(frozen) > 50_000 and enabled == "True"  # the modules and plugins, out of every full collection


def test_a_run_invoked_in_process_leaves_the_collector_alone(project):
    from ragassay.cli.main import cli

    before = gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["run", str(project), "-q"])
    assert result.exit_code == 0, result.output
    assert gc.get_freeze_count() == before and gc.isenabled()
