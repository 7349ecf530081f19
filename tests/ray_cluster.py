"""A real local Ray cluster for tests: ``ray start --head --block`` in a temporary folder, loopback only.

The head runs in its own process group with a random auth token, a free loopback port and a small object
store; :meth:`LocalRayCluster.stop` ends the whole group (SIGTERM, then SIGKILL for what is left), so no Ray
process outlives the test session. Worker processes get ``PYTHONPATH`` from the cluster's environment: pass
the folders whose modules they must import (a pip-installed plugin site, the tests folder).

    cluster = LocalRayCluster.start(tmp, num_cpus=4, pythonpath=[plugin_site])
    ... ray.init(address=cluster.address) ...
    cluster.stop()
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_TIMEOUT_S = 120


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: ``ray start --node-ip-address=127.0.0.1`` alone is not enough: Ray swaps a loopback address for the machine's
#: outward IP (``services.resolve_ip_for_localhost``, in ``ray start`` and in a driver's ``ray.init``) unless its
#: multi-node mode is off, and then the GCS and the raylet listen on every interface (``::``). With it off, the
#: node's address stays 127.0.0.1 and every server of the head, workers included (they inherit the head's
#: environment), listens on loopback only; a driver must have it too, or it looks for the GCS at the outward IP.
#: (Ray refuses ``ray start --address`` of a further node in this mode: extra nodes need ``ray.cluster_utils``.)
LOOPBACK_ONLY_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}


def ray_env(token: str) -> dict[str, str]:
    """Environment entries a driver needs to join a cluster started by :class:`LocalRayCluster` (set them before
    ``ray`` is imported: it reads them then)."""
    return {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token, "RAY_USAGE_STATS_ENABLED": "0", **LOOPBACK_ONLY_ENV}


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket listening in process ``pid`` and its descendants."""
    import psutil

    root = psutil.Process(pid)
    found = set()
    for process in [root, *root.children(recursive=True)]:
        try:
            connections = process.net_connections(kind="tcp")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found |= {(c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}
    return found


@dataclasses.dataclass
class LocalRayCluster:
    """A running head node (with ``num_cpus`` worker slots) on 127.0.0.1."""

    address: str
    token: str
    process: subprocess.Popen
    temp_dir: Path
    log: Path

    @classmethod
    def start(cls, num_cpus: int = 4, pythonpath: list[Path] | None = None) -> LocalRayCluster:
        """Start a head node and wait until a driver can connect; raises RuntimeError with its log if not."""
        # Ray's unix socket paths must stay short: a folder directly under /tmp.
        temp_dir = Path(tempfile.mkdtemp(prefix="rg-", dir="/tmp"))
        log = temp_dir / "head.log"
        port = free_port()
        token = secrets.token_hex(32)
        env = {**os.environ, **ray_env(token)}
        extra = os.pathsep.join(str(p) for p in pythonpath or [])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [extra, env.get("PYTHONPATH", "")]))
        command = [
            sys.executable,
            "-c",
            "from ray.scripts.scripts import main; main()",
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            f"--num-cpus={num_cpus}",
            "--num-gpus=0",
            "--object-store-memory=300000000",
            "--include-dashboard=false",
            "--dashboard-host=127.0.0.1",
            "--disable-usage-stats",
            f"--temp-dir={temp_dir}",
        ]
        with open(log, "wb") as out:
            process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        cluster = cls(f"127.0.0.1:{port}", token, process, temp_dir, log)
        cluster._wait_ready(port)
        return cluster

    def _wait_ready(self, port: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"ray start exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            if "Ray runtime started" in self.log.read_text(errors="replace"):
                return
            time.sleep(0.3)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"the Ray head did not start in {START_TIMEOUT_S}s:\n{tail}")

    def stop(self) -> None:
        """End the head and every process it started (workers, raylet, GCS)."""
        import psutil

        try:
            family = psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            family = []
        _signal_group(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            _signal_group(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=15)
        for child in family:  # workers that left the group
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
        shutil.rmtree(self.temp_dir, ignore_errors=True)


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


TESTS = Path(__file__).resolve().parent


def _ray_cluster_fixture(plugin_site):
    """A session's local cluster (4 CPUs); the test process joins it through ``RAY_AUTH_TOKEN``."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is None:
        pytest.skip("Ray is not installed (pip install 'ragassay[ray]')")
    try:
        cluster = LocalRayCluster.start(num_cpus=4, pythonpath=[plugin_site, TESTS])
    except (RuntimeError, OSError) as exc:
        pytest.skip(f"a local Ray cluster could not start here: {str(exc)[:500]}")
    saved = {key: os.environ.get(key) for key in ray_env(cluster.token)}
    os.environ.update(ray_env(cluster.token))  # before ray is imported: it reads the auth mode then
    try:
        yield cluster
    finally:
        import ray

        ray.shutdown()
        cluster.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def make_ray_cluster_fixture():
    """The session-scoped ``ray_cluster`` fixture (import it into a test module: ``ray_cluster = ...``)."""
    import pytest

    return pytest.fixture(scope="session", name="ray_cluster")(_ray_cluster_fixture)
