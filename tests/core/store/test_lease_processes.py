"""Run leases between real processes on one database: refused or waiting, taken over after kill -9, one winner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from ragassay.store import open_store, store_url
from ragassay.store.lease import LeaseHeldError, acquire

pytestmark = pytest.mark.slow


HOLD = """
import sys, time
from ragassay.store import open_store
from ragassay.store.lease import acquire
lease = acquire(open_store(sys.argv[1]).engine, "fp", heartbeat_s=0.2)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
lease.release()
"""

RACE = """
import sys, time
from ragassay.store import open_store
from ragassay.store.lease import LeaseHeldError, acquire
engine = open_store(sys.argv[1]).engine
engine.connect().close()
while time.time() < float(sys.argv[2]):
    time.sleep(0.001)
try:
    lease = acquire(engine, "fp", heartbeat_s=0.2)
except LeaseHeldError:
    print("refused", flush=True)
else:
    print("won", flush=True)
    time.sleep(4)
    lease.release()
"""


@pytest.fixture(params=["postgresql", "sqlite"])
def url(request, tmp_path):
    if request.param == "sqlite":
        url = store_url("results.db", tmp_path)
        open_store(url).close()
        return url
    open_store(request.getfixturevalue("postgres_url")).close()
    return request.getfixturevalue("postgres_url")


def hold(url, seconds):
    holder = subprocess.Popen([sys.executable, "-c", HOLD, url, str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_process_is_refused_or_waits_until_the_first_releases(url):
    holder = hold(url, 2.0)
    engine = open_store(url).engine
    with pytest.raises(LeaseHeldError, match=f"pid {holder.pid} on"):
        acquire(engine, "fp")
    waited: list = []
    with acquire(engine, "fp", wait=True, on_wait=waited.append, poll_s=0.05):
        assert holder.poll() is not None or holder.wait(timeout=10) == 0  # it got the lease after the release
    assert [h.pid for h in waited] == [holder.pid]
    engine.dispose()


def test_the_lease_of_a_killed_process_is_taken_over(url):
    holder = hold(url, 600)
    engine = open_store(url).engine
    with pytest.raises(LeaseHeldError):
        acquire(engine, "fp")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    with acquire(engine, "fp") as lease:
        assert f"process {holder.pid}" in lease.notes[0] and "is gone" in lease.notes[0]
    engine.dispose()


def test_only_one_of_several_racing_processes_wins(url):
    start_at = time.time() + 4.0  # after every process has imported ragassay and connected
    racers = [
        subprocess.Popen([sys.executable, "-c", RACE, url, str(start_at)], stdout=subprocess.PIPE, text=True)
        for _ in range(5)
    ]
    outcomes = sorted(p.communicate(timeout=120)[0].strip() for p in racers)
    assert outcomes == ["refused"] * 4 + ["won"]
