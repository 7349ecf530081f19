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


class Clock:
    """A clock the test moves by hand: estimates independent of the machine's speed."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_eta_is_estimated_per_system_when_costs_differ():
    """The main example's shape: a cheap system done first, then an expensive one (0.1 s vs 10 s a unit)."""
    clock = Clock()
    progress = PlainProgress(60, echo=lambda line: None, clock=clock)
    progress.start(200, systems=2)
    clock.now = 30.0  # building the systems: charged to nobody
    for done in range(1, 101):
        clock.now += 0.1
        progress.advance(False, "keyword")
        if done == 50:  # dense has not answered yet: what is known is a lower bound, and said to be one
            assert progress.eta.text() == ">5s (1 of 2 systems not timed yet)"
    for _ in range(5):
        clock.now += 10.0
        progress.advance(False, "dense")
    seconds, untimed = progress.eta.seconds_left()
    assert untimed == 0 and seconds == pytest.approx(95 * 10.0)  # 95 dense units at 10 s; a rate over all
    assert progress.line().endswith("eta 950s")  # units (105 in 90 s) would have said 81 s
    clock.now += 4.0  # between results the estimate counts down
    assert progress.eta.seconds_left()[0] == pytest.approx(946.0)
    progress.stop()


def test_eta_without_the_number_of_systems_charges_every_unit_alike():
    clock = Clock()
    progress = PlainProgress(60, echo=lambda line: None, clock=clock)
    progress.start(10)
    assert progress.eta.text() == "unknown"
    for system in ("a", "b", "a"):
        clock.now += 2.0
        progress.advance(False, system)
    assert progress.eta.text() == "14s"  # 7 units left at 2 s (the first result is charged nothing)
    progress.stop()


def test_system_count_expands_grids(project):
    from ragassay.cli.progress import system_count
    from ragassay.config import load_config

    assert system_count(load_config(project)) == 2


def test_eta_of_a_resumed_run_with_each_systems_units_known():
    """Resumed: keyword and bm25 were done before (never timed now), dense has 30 left, hybrid 50."""
    from ragassay.cli.progress import SystemEta

    clock = Clock()
    eta = SystemEta(80, clock=clock, units={"keyword": 0, "bm25": 0, "dense": 30, "hybrid": 50})
    clock.now = 5.0
    eta.record("dense")  # the first result pays for building the systems: no cost yet
    assert eta.text() == "unknown"
    for _ in range(9):
        clock.now += 2.0
        eta.record("dense")
    assert eta.text() == ">40s (1 of 4 systems not timed yet)"  # 20 dense units at 2 s; hybrid not started
    for _ in range(20):
        clock.now += 2.0
        eta.record("dense")
    assert eta.text() == "unknown (1 of 4 systems not timed yet)"  # dense done: nothing known is left
    clock.now += 6.0
    eta.record("hybrid")
    assert eta.seconds_left() == (pytest.approx(49 * 6.0), 0)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def phase_progress(every_s=5.0):
    from ragassay.cli.progress import PlainProgress

    lines, clock = [], Clock()
    progress = PlainProgress(every_s, echo=lines.append, clock=clock)
    progress.total, progress._started = 10, clock.now  # counted from now, without the ticking thread
    progress._last_line = clock.now
    return progress, lines, clock


def test_build_phases_print_lines_with_rate_and_eta_instead_of_zero_units():
    from ragassay import PhaseProgress

    progress, lines, clock = phase_progress()
    progress.phase(PhaseProgress("building systems", 0, 2, "systems", note="dense"))
    progress.phase(PhaseProgress("corpus embedding", 0, 1000, "chunks"))
    progress.tick()
    assert lines == []  # nothing for a phase younger than a second
    clock.now += 2
    progress.phase(PhaseProgress("corpus embedding", 100, 1000, "chunks"))
    progress.tick()
    assert lines == ["building: dense (1/2): corpus embedding 100/1,000 chunks, 50.0 chunks/s, elapsed 2.0s, eta 18s"]
    clock.now += 1
    progress.tick()
    assert len(lines) == 1  # the next line after the interval
    clock.now += 5
    progress.phase(PhaseProgress("corpus embedding", 400, 1000, "chunks"))
    progress.tick()
    assert lines[-1].startswith("building: dense (1/2): corpus embedding 400/1,000 chunks, 50.0 chunks/s")
    assert not any(line.startswith("progress:") for line in lines)  # no "0/10 units, eta unknown" meanwhile
    clock.now += 12
    progress.phase(PhaseProgress("corpus embedding", 1000, 1000, "chunks"))
    assert lines[-1] == "built: dense: corpus embedding: 1,000 chunks in 20.0s (50.0 chunks/s)"
    progress.phase(PhaseProgress("building systems", 2, 2, "systems"))
    clock.now += 5
    progress.tick()
    assert lines[-1].startswith("progress: 0/10 units")  # building is over: the units line again


def test_quick_phases_print_nothing_and_cache_hits_one_line():
    from ragassay import PhaseProgress

    progress, lines, clock = phase_progress()
    progress.phase(PhaseProgress("building systems", 0, 1, "systems", note="bm25"))
    for done in (0, 3):
        progress.phase(PhaseProgress("chunking", done, 3, "documents"))
    progress.phase(PhaseProgress("corpus embedding", 5183, 5183, "chunks", note="cache hit"))
    clock.now += 0.5
    progress.tick()
    assert lines == ["built: bm25: corpus embedding: 5,183 chunks (cache hit)"]


def test_phase_lines_and_warnings_escape_control_characters():
    from ragassay import PhaseProgress

    progress, lines, clock = phase_progress()
    progress.warning("document 'a\x1b[2Jb' is large")
    progress.phase(PhaseProgress("building systems", 0, 1, "systems", note="evil\x1b]0;title\x07"))
    clock.now += 2
    progress.tick()
    assert lines[0] == "warning: document 'a\\x1b[2Jb' is large"
    assert "\x1b" not in lines[1] and "\\x1b]0;title\\x07" in lines[1]


def test_bar_shows_a_row_per_phase_with_markup_escaped():
    import io

    from rich.console import Console

    from ragassay import PhaseProgress
    from ragassay.cli.progress import BarProgress

    bar = BarProgress()
    out = io.StringIO()
    bar._progress.live.console = Console(file=out, width=200)  # printed lines land here
    bar.phase(PhaseProgress("building systems", 0, 1, "systems", note="[red]x"))
    bar.phase(PhaseProgress("corpus embedding", 64, 128, "chunks"))
    rows = {t.description: (t.completed, t.total) for t in bar._progress.tasks}
    assert rows == {"building systems": (0, 1), "\\[red]x: corpus embedding": (64, 128)}
    bar.phase(PhaseProgress("corpus embedding", 128, 128, "chunks", note="cache hit"))
    bar.warning("[bold]not markup")
    bar.phase(PhaseProgress("building systems", 1, 1, "systems"))
    assert bar._progress.tasks == []
    printed = out.getvalue()
    assert "built: [red]x: corpus embedding: 128 chunks (cache hit)" in printed
    assert "warning: [bold]not markup" in printed
