"""What ``ragassay serve`` computes at once is bounded: requests for four new ``?seed=`` variants of a page (each
a minute of CPU and hundreds of MiB on a 100,000-sample run) compute two at a time, the others wait for a slot;
a page already kept is served while they compute."""

from __future__ import annotations

import sqlite3
import threading
import time
import types

import pytest
from starlette.testclient import TestClient

from ragassay import Note, RunSection, Section, hookimpl
from ragassay.plugin_manager import load_plugins
from ragassay.present.serve import create_app
from ragassay.present.serve.cache import COMPUTED_AT_ONCE
from ragassay.store import open_store

from conftest import BASIC_CONFIG, ragassay_cli, write_project

GUARD_S = 600  # a hang guard only: every wait below ends on the event it waits for


class Gauge:
    """How many section computations run now and at most, released by the test."""

    def __init__(self):
        self.inside = self.most = 0
        self.changed = threading.Condition()
        self.release = threading.Event()

    def wait_until(self, test) -> None:
        """Until ``test()`` holds (looked at whenever a computation starts or ends, and every 10 ms: the slots'
        queue changes without telling the gauge)."""
        deadline = time.monotonic() + GUARD_S
        with self.changed:
            while not test():
                assert time.monotonic() < deadline, "hang guard"
                self.changed.wait(0.01)


GAUGE = Gauge()


class Slow(RunSection):
    """A page that computes until the test releases it, counting how many compute at once."""

    name = "slow"
    page = "slow"

    def sections(self, view):
        with GAUGE.changed:
            GAUGE.inside += 1
            GAUGE.most = max(GAUGE.most, GAUGE.inside)
            GAUGE.changed.notify_all()
        assert GAUGE.release.wait(GUARD_S)
        with GAUGE.changed:
            GAUGE.inside -= 1
            GAUGE.changed.notify_all()
        return Section("slow", "Slow", [Note(f"seed {view.seed}")])


def plugin_host():
    plugin = types.SimpleNamespace()

    @hookimpl
    def register_sections(register):
        register(Slow)

    plugin.register_sections = register_sections
    return load_plugins([("slowkit", plugin)], entry_points=False)


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("slots-project")
    config = write_project(root, BASIC_CONFIG)
    assert ragassay_cli("run", str(config), "-q").returncode == 0
    with sqlite3.connect(root / "ragassay-results.db") as con:
        (run_id,) = con.execute("select id from runs").fetchone()
    store = open_store(f"sqlite:///{root / 'ragassay-results.db'}", create=False)
    yield store, run_id
    store.close()


def test_new_seed_variants_compute_two_at_a_time(stored_run):
    store, run_id = stored_run
    app = create_app(store, token=None, host=plugin_host(), prepare=False)
    web = TestClient(app, base_url="http://127.0.0.1")
    assert web.get(f"/runs/{run_id}").status_code == 200  # a page computed and kept before the variants
    slots = app.state.runs.slots
    answers = {}

    def ask(seed: int) -> None:
        answers[seed] = TestClient(app, base_url="http://127.0.0.1").get(f"/runs/{run_id}/slow?seed={seed}")

    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(1, 5)]
    for thread in threads:
        thread.start()
    try:
        GAUGE.wait_until(lambda: GAUGE.inside == COMPUTED_AT_ONCE and slots.waiting == 4 - COMPUTED_AT_ONCE)
        assert GAUGE.inside == COMPUTED_AT_ONCE  # the other two wait for a slot, computing nothing
        assert web.get(f"/runs/{run_id}").status_code == 200  # a kept page takes no slot
    finally:
        GAUGE.release.set()
        for thread in threads:
            thread.join(GUARD_S)
    assert GAUGE.most == COMPUTED_AT_ONCE
    assert {seed: answer.status_code for seed, answer in answers.items()} == {1: 200, 2: 200, 3: 200, 4: 200}
    assert all(f"seed {seed}" in answers[seed].text for seed in answers)
