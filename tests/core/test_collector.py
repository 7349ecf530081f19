"""``ragassay run`` freezes its long-lived objects for Python's garbage collector in the console script's own
process only (ragassay.collector)."""

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


IMPORTS = """
import gc, sys
sys.path.insert(0, sys.argv[1])
from importlib import metadata
from ragassay import collector, plugin_manager, require

if sys.argv[2] == "cli":
    collector.use_in_this_process()
frozen = gc.get_freeze_count()
require("module_that_notes_the_collector", "test")
plugin = metadata.EntryPoint("noting", "plugin_that_notes_the_collector", "ragassay")
plugin_manager.PluginHost()._load_entry_point(plugin_manager._EntryPoint(plugin, "", ""))
import module_that_notes_the_collector as a, plugin_that_notes_the_collector as b
print(a.ENABLED, b.ENABLED, gc.isenabled(), gc.get_freeze_count() > frozen)
"""


def test_first_imports_of_dependencies_and_plugins_pause_the_collector_in_the_command_only(tmp_path):
    """The SDK a plugin requires at the first model call, and a plugin the lazy host loads, are imported with the
    collector paused (a full collection had run inside the SDK's import), then frozen; a library user's process
    keeps its collector as it was."""
    for name in ("module_that_notes_the_collector", "plugin_that_notes_the_collector"):
        (tmp_path / f"{name}.py").write_text("import gc\nENABLED = gc.isenabled()\n")
    seen = {}
    for mode in ("cli", "library"):
        done = subprocess.run(
            [sys.executable, "-c", IMPORTS, str(tmp_path), mode], env=cli_env(), capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        seen[mode] = done.stdout.split()
    assert seen["cli"] == ["False", "False", "True", "True"]
    assert seen["library"] == ["True", "True", "True", "False"]
