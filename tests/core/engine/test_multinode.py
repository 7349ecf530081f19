"""The Ray executor on a simulated multi-node cluster (``ray.cluster_utils.Cluster``: a head and three worker
nodes, each its own raylet, every one on 127.0.0.1): a node removed mid-run costs its worker and nothing else:
the stored results equal a local run's.

The second half of the samples is held (the echo system answers them once a release file exists), so the
node is removed at a point set by progress, not by time: when the first half is stored, every worker is busy
with a held batch (or about to be given one), and the removed worker's batch must be redone elsewhere."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest

from ragassay.config import load_config
from ragassay.engine.executor import executor_for, with_executor
from ragassay.engine.project import Project
from ragassay.engine.runner import Runner, plan_run

from conftest import write_project

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[2]
SAMPLES = 48
QA = [
    {
        "question_id": f"q{i:03d}",
        "question": f"What is item {i}?",
        "reference_answers": [f"item {i} is number {i * 7 % 50}"],
        "reference_contexts": [f"Item {i} is number {i * 7 % 50} in the list."],
    }
    for i in range(SAMPLES)
]
CONFIG = """
    [project]
    concurrency = 2
    results = "results.db"
    [project.ray]
    workers = 2
    cpus_per_worker = 1
    batch_size = 2
    batches_in_flight = 1
    max_worker_restarts = 2
    [dataset]
    options = { path = "qa.jsonl" }
    [systems.echo]
    rag = { name = "testkit/echo", options = { delay_s = 0.05, fail_ids = ["q005"], held_ids = HELD, release_file = "RELEASE" } }
    [evaluation]
    order = "file"  # the held second half must come after the first (the seeded order would interleave them)
    metrics = ["token_recall", "token_f1", "exact_match"]
    judges = ["match"]
"""


def _digest(db: Path) -> str:
    """sha256 of every stored output (latency left out) and value, in key order."""
    con = sqlite3.connect(db)
    try:
        rows = []
        for system, qid, status, error, raw in con.execute(
            "select system, question_id, status, error, output_json from outputs order by system, question_id"
        ):
            output = json.loads(raw) if raw else None
            if output:
                output.pop("latency_s", None)
            rows.append([system, qid, status, error, output])
        rows += con.execute(
            "select o.system, o.question_id, m.metric, m.value, m.unscored_reason from metric_values m "
            "join outputs o on o.id = m.output_id order by 1, 2, 3"
        ).fetchall()
        rows += con.execute(
            "select o.system, o.question_id, j.judge, j.verdict, j.score from judgements j "
            "join outputs o on o.id = j.output_id order by 1, 2, 3"
        ).fetchall()
    finally:
        con.close()
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _run(config: Path, host, executor: str, holder: list | None = None, on_result=None):
    loaded = with_executor(load_config(config), executor)
    project = Project.load(loaded, host.registry)
    plan = plan_run(project)
    store = project.open_store()
    runner_executor = executor_for(loaded.config, store)
    if holder is not None:
        holder.append(runner_executor)
    try:
        return asyncio.run(Runner(plan, store, executor=runner_executor, on_result=on_result).run())
    finally:
        store.close()


def _config(release: Path) -> str:
    """CONFIG with the held samples (the second half) and the file that releases them."""
    held = json.dumps([q["question_id"] for q in QA[SAMPLES // 2 :]])
    return CONFIG.replace("HELD", held).replace('"RELEASE"', json.dumps(str(release)))


class NodeRemover(threading.Thread):
    """Removes the node of the run's first worker once the driver has received ``threshold`` units (every unit
    that is not held), then writes the release file (progress, not time)."""

    def __init__(self, cluster, executors: list, threshold: int, release: Path):
        super().__init__(daemon=True)
        self.cluster, self.executors, self.threshold = cluster, executors, threshold
        self.release = release
        self.received = 0  # units the driver has received (on_result), stored or about to be
        self.removed: str | None = None
        self.received_then = 0
        self.error: BaseException | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            self._watch()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the test
            self.error = exc
        finally:
            self.release.touch()  # whatever happened, the held units go on

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            nodes = self.executors[0].worker_nodes if self.executors else []
            received = self.received
            if nodes and received >= self.threshold:
                pid = self.executors[0].worker_pids[0]
                node = next(n for n in self.cluster.worker_nodes if n.node_id == nodes[0])
                self.cluster.remove_node(node, allow_graceful=False)
                self.removed, self.received_then = nodes[0], received
                _gone(pid)  # before the release: a worker outliving its raylet for a moment must not answer
                return


def _gone(pid: int) -> None:
    """Wait for the process ``pid`` of a removed node to exit (a node lost takes its processes with it: one still
    there after 60 s is killed)."""
    import psutil

    try:
        process = psutil.Process(pid)
        process.wait(timeout=60)
    except psutil.NoSuchProcess:
        return
    except psutil.TimeoutExpired:
        process.kill()


def _listening_addresses(pids: set[int]) -> set[str]:
    """The addresses the processes ``pids`` listen on (TCP)."""
    import psutil

    return {
        conn.laddr.ip
        for conn in psutil.net_connections(kind="inet")
        if conn.status == psutil.CONN_LISTEN and conn.pid in pids
    }


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%")[0])
    return ip.is_loopback or (ip.version == 6 and ip.ipv4_mapped is not None and ip.ipv4_mapped.is_loopback)


@pytest.fixture
def cluster(monkeypatch):
    """A head (no CPUs: the driver's node) and three one-CPU worker nodes, all bound to 127.0.0.1."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    # worker processes import the testkit plugin (conftest) like the driver does
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH", "")])))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    # Ray turns a loopback address into the machine's own address before connecting
    # (services.resolve_ip_for_localhost) unless clusters are "disabled": then it stays 127.0.0.1, where this
    # cluster's servers listen (and only there)
    monkeypatch.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    monkeypatch.setattr("ray._private.ray_constants.ENABLE_RAY_CLUSTER", False)
    if ray.is_initialized():
        ray.shutdown()  # another test's cluster: this test joins its own
    temp_dir = tempfile.mkdtemp(prefix="rg-", dir="/tmp")  # Ray's socket paths must stay short
    local = {"node_ip_address": "127.0.0.1", "temp_dir": temp_dir, "object_store_memory": 80 * 1024 * 1024}
    try:
        cluster = Cluster(initialize_head=True, head_node_args={**local, "num_cpus": 0, "include_dashboard": False})
        for index in range(3):
            cluster.add_node(**local, num_cpus=1, resources={f"node{index}": 1})
    except Exception as exc:  # noqa: BLE001 - reported as a skip with the reason
        shutil.rmtree(temp_dir, ignore_errors=True)
        pytest.skip(f"a simulated Ray cluster could not start here: {str(exc)[:300]}")
    ray.init(address=cluster.address, _node_ip_address="127.0.0.1", configure_logging=False, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
        if cluster.head_node is not None:
            cluster.remove_node(cluster.head_node)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _cluster_pids(cluster) -> set[int]:
    import psutil

    pids = set()
    for node in cluster.list_all_nodes():
        for infos in node.all_processes.values():
            for info in infos:
                pids.add(info.process.pid)
                try:
                    pids |= {child.pid for child in psutil.Process(info.process.pid).children(recursive=True)}
                except psutil.NoSuchProcess:
                    pass
    return pids


def test_a_node_removed_mid_run_leaves_the_results_of_a_local_run(tmp_path, host, cluster):
    assert len({node.node_id for node in cluster.list_all_nodes()}) == 4  # four raylets, four node ids
    listening = _listening_addresses(_cluster_pids(cluster))
    assert listening and all(_loopback(address) for address in listening), listening  # loopback only

    released = tmp_path / "released"
    released.touch()
    local = write_project(tmp_path / "local", _config(released), qa=QA, docs={})
    _run(local, host, "local")

    release = tmp_path / "release"
    config = write_project(tmp_path / "ray", _config(release), qa=QA, docs={})
    executors: list = []
    remover = NodeRemover(cluster, executors, SAMPLES // 2, release)
    remover.start()

    def received(_result) -> None:
        remover.received += 1

    try:
        summary = _run(config, host, "ray", holder=executors, on_result=received)
    finally:
        remover.stop.set()
        remover.join(timeout=60)

    if remover.error is not None:
        raise remover.error
    assert remover.removed is not None, "the run ended before the unheld half of its units was received"
    assert remover.received_then < SAMPLES  # removed mid-run
    executor = executors[0]
    assert executor.restarts >= 1 and remover.removed not in executor.worker_nodes
    assert any("died" in warning for warning in summary.warnings)
    assert (summary.completed, summary.failed) == (SAMPLES, 1)
    assert _digest(tmp_path / "ray" / "results.db") == _digest(tmp_path / "local" / "results.db")
