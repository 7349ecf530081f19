"""The local Ray cluster the distributed tests run on starts, runs tasks in several processes and stops."""

from __future__ import annotations

import os

import pytest


@pytest.mark.slow
def test_cluster_runs_tasks_in_worker_processes(ray_cluster):
    import ray

    if not ray.is_initialized():  # another test module may have joined already
        ray.init(
            address=ray_cluster.address, configure_logging=False, log_to_driver=False, _node_ip_address="127.0.0.1"
        )

    @ray.remote
    def pid():
        import ragassay  # the workers see the same environment as the driver

        return os.getpid(), ragassay.__name__

    results = ray.get([pid.remote() for _ in range(8)])
    assert {name for _, name in results} == {"ragassay"}
    assert os.getpid() not in {p for p, _ in results}


@pytest.mark.slow
def test_the_cluster_listens_on_loopback_only(ray_cluster):
    """Every listening socket of the head and its workers is on 127.0.0.1 (it used to be '::', all interfaces)."""
    import ray

    from ray_cluster import listening_addresses

    if not ray.is_initialized():
        ray.init(
            address=ray_cluster.address, configure_logging=False, log_to_driver=False, _node_ip_address="127.0.0.1"
        )
    assert ray.get(ray.remote(lambda: 1).remote()) == 1  # a worker process is up too
    addresses = listening_addresses(ray_cluster.process.pid)
    assert addresses, "the head listens somewhere"
    exposed = {(ip, port) for ip, port in addresses if ip not in ("127.0.0.1", "::ffff:127.0.0.1", "::1")}
    assert not exposed, f"listening beyond loopback: {sorted(exposed)}"
