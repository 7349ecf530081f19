"""Progress of ``ragassay run`` without a terminal: a plain line every few seconds, counting units."""

from __future__ import annotations

import re

import pytest

from ragassay.cli.progress import PlainProgress, progress_every
from ragassay.errors import ConfigError

from conftest import cli_env, ragassay_cli
from processes import slow_project

LINE = re.compile(r"^progress: (\d+)/30 units, 0 failed, [\d.]+ units/s, elapsed [\d.]+s, eta (\d+s|unknown)$")


@pytest.mark.slow
@pytest.mark.parametrize("how", ["option", "environment"])
def test_run_without_a_terminal_prints_progress_lines(plugin_site, tmp_path, how):
    config = slow_project(tmp_path, delay_s=0.1)
    args, extra = (["--progress-every", "0.3"], {}) if how == "option" else ([], {"RAGASSAY_PROGRESS_EVERY": "0.3"})
    result = ragassay_cli("run", str(config), *args, env=cli_env(plugin_site, **extra), timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("progress:")]
    assert len(lines) >= 2, result.stderr
    counts = [int(LINE.match(line).group(1)) for line in lines]
    assert counts == sorted(counts) and counts[-1] <= 30


def test_quiet_run_prints_no_progress(project):
    result = ragassay_cli("run", str(project), "-q", "--progress-every", "0.01", env=cli_env())
    assert result.returncode == 0, result.stderr
    assert "progress:" not in result.stderr


def test_progress_line_counts_units_failures_rate_and_eta():
    lines = []
    progress = PlainProgress(60, echo=lines.append)
    progress.start(10)
    for failed in (False, True, False, False):
        progress.advance(failed)
    progress.stop()
    assert lines == []  # nothing before the first interval
    match = re.match(
        r"^progress: 4/10 units, 1 failed, ([\d.]+) units/s, elapsed [\d.]+s, eta (\d+)s$", progress.line()
    )
    assert match and float(match.group(1)) > 0


def test_progress_interval_comes_from_option_then_environment(monkeypatch):
    monkeypatch.delenv("RAGASSAY_PROGRESS_EVERY", raising=False)
    assert progress_every(None) == 10.0
    monkeypatch.setenv("RAGASSAY_PROGRESS_EVERY", "2.5")
    assert progress_every(None) == 2.5 and progress_every(4) == 4.0
    for bad in ("0", "-1", "soon", "nan"):
        monkeypatch.setenv("RAGASSAY_PROGRESS_EVERY", bad)
        with pytest.raises(ConfigError, match="RAGASSAY_PROGRESS_EVERY"):
            progress_every(None)


def test_a_bad_interval_is_one_line_and_exit_2(project):
    result = ragassay_cli("run", str(project), "--progress-every", "0", env=cli_env())
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "positive" in result.stderr
