"""The cluster-wide LLM budget on a real local Ray cluster: 4 worker processes call a loopback OpenAI-compatible
server through the real client stack (LLMClient, the openai backend and library) and together stay within one
budget of concurrency and requests per window; a killed worker's slots come back with ``release_holder``."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from servers.openai_chat import OpenAIChatServer, ScriptedServer, Turn

DELAY_S = 0.2  # every reply of the fast server takes this long
SLOW_S = 3.0  # replies to "slow" requests


def _worker_class():
    """The worker actor (a local class, so Ray sends it by value to processes that cannot import this file)."""
    import ray

    class BudgetWorker:
        """One worker process: installs the shared budget, then makes LLM calls as the executor's workers do."""

        def install(self, budget, holder_id: str) -> int:
            import os

            from ragassay.engine.ray_budget import install_ray_budget

            self.budget = install_ray_budget(budget, holder_id)
            return os.getpid()

        def run(self, url: str, tag: str, calls: int, concurrency: int, rpm: int | None = None) -> list[str]:
            import asyncio

            from ragassay.llm.client import LLMClient
            from ragassay.plugins.openai_llm import OpenAIBackend, OpenAIOptions

            options = OpenAIOptions(
                model="test-model",
                base_url=url + "/v1",
                concurrency=concurrency,
                requests_per_minute=rpm,
                max_retries=0,
                timeout_s=60,
            )
            client = LLMClient(OpenAIBackend(options))

            async def main():
                messages = [[{"role": "user", "content": f"{tag} {i}"}] for i in range(calls)]
                replies = await asyncio.gather(*(client.chat(m) for m in messages))
                await self.budget.drain()
                return [r.text for r in replies]

            return asyncio.run(main())

    return ray.remote(num_cpus=0)(BudgetWorker)


def _reply(request) -> Turn:
    text = ScriptedServer.last_user_text(request)
    return Turn(text=f"echo: {text}", delay_s=SLOW_S if text.startswith("slow") else DELAY_S)


# --- the actor's logic, in this process (no Ray needed) ---


def test_slots_are_granted_first_come_first_served_across_workers():
    from ragassay.engine.ray_budget import LLMBudget

    async def main():
        budget, key, order = LLMBudget(), ("openai", "u"), []

        async def call(holder: str):
            token = await budget.acquire(key, 2, None, holder)
            order.append(holder)
            await asyncio.sleep(0.01)
            budget.release(token)

        holders = ["a", "b", "a", "c", "b", "c"]
        tasks = []
        for holder in holders:  # arrival order a b a c b c
            tasks.append(asyncio.create_task(call(holder)))
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        return order, budget.stats()[key]

    order, stats = asyncio.run(main())
    assert order == ["a", "b", "a", "c", "b", "c"]
    assert (stats["peak_in_flight"], stats["grants"], stats["in_flight"], stats["waiting"]) == (2, 6, 0, 0)


def test_the_smallest_declared_limits_win_and_release_holder_frees_a_workers_slots():
    from ragassay.engine.ray_budget import LLMBudget

    async def main():
        budget, key = LLMBudget(), ("anthropic", "u")
        await budget.acquire(key, 8, 100, "dead")
        await budget.acquire(key, 2, 50, "dead")
        waiting = asyncio.create_task(budget.acquire(key, 4, None, "dead"))
        other = asyncio.create_task(budget.acquire(key, 4, None, "alive"))
        await asyncio.sleep(0.01)
        before = dict(budget.stats()[key])
        freed = budget.release_holder("dead")
        token = await asyncio.wait_for(other, 1)
        with pytest.raises(asyncio.CancelledError):
            await waiting
        with pytest.raises(RuntimeError, match="released as dead"):
            await budget.acquire(key, 4, None, "dead")
        return before, freed, token, budget.stats()[key]

    before, freed, token, after = asyncio.run(main())
    assert (before["limit"], before["rpm"], before["in_flight"], before["waiting"]) == (2, 50, 2, 2)
    assert freed == 2 and token == 3
    assert (after["in_flight"], after["waiting"], after["grants"]) == (1, 0, 3)


def test_a_full_window_grants_the_next_start_when_the_oldest_leaves():
    from ragassay.engine.ray_budget import LLMBudget

    async def main():
        budget, key = LLMBudget(window_s=0.3), ("openai", "u")
        start = time.monotonic()
        times = []
        for _ in range(3):
            budget.release(await budget.acquire(key, 8, 2, "a"))
            times.append(time.monotonic() - start)
        return times, budget.stats()[key]["most_starts_in_window"]

    times, most = asyncio.run(main())
    assert times[1] < 0.1 and 0.29 <= times[2] < 0.5 and most == 2


# --- a real cluster ---


@pytest.fixture(scope="module")
def ray_session(ray_cluster):
    import ray

    if not ray.is_initialized():
        ray.init(
            address=ray_cluster.address, _node_ip_address="127.0.0.1", configure_logging=False, log_to_driver=False
        )
    return ray


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer(default=_reply) as running:
        yield running


@pytest.fixture(scope="module")
def workers(ray_session):
    Worker = _worker_class()
    handles = [Worker.remote() for _ in range(4)]
    yield handles
    for handle in handles:
        ray_session.kill(handle)


def _budget(ray, window_s: float = 60.0):
    from ragassay.engine.ray_budget import create_llm_budget

    return create_llm_budget(name=f"budget-{uuid.uuid4().hex[:8]}", window_s=window_s)


def _install(ray, workers, budget, prefix: str) -> None:
    pids = ray.get([w.install.remote(budget, f"{prefix}-{i}") for i, w in enumerate(workers)])
    assert len(set(pids)) == len(workers)  # separate processes


def _stats(ray, budget, server) -> dict:
    return ray.get(budget.stats.remote())[("openai", server.url + "/v1")]


@pytest.mark.slow
def test_four_workers_share_one_concurrency_budget(ray_session, workers, server):
    ray = ray_session
    budget = _budget(ray)
    _install(ray, workers, budget, "conc")
    ray.get([w.run.remote(server.url, f"warm{i}", 1, 3) for i, w in enumerate(workers)], timeout=120)
    server.reset()
    server.reset_peak()
    calls = 10
    start = time.monotonic()
    refs = [w.run.remote(server.url, f"w{i}", calls, 3) for i, w in enumerate(workers)]
    replies = ray.get(refs, timeout=120)
    elapsed = time.monotonic() - start
    ideal = len(workers) * calls * DELAY_S / 3
    assert [len(r) for r in replies] == [calls] * 4 and replies[2][0] == "echo: w2 0"
    assert server.calls == 40
    assert server.peak_in_flight == 3  # never more than the budget, and it is used fully
    assert ideal * 0.95 <= elapsed <= ideal * 1.5, (elapsed, ideal)
    stats = _stats(ray, budget, server)
    assert (stats["limit"], stats["in_flight"], stats["peak_in_flight"], stats["grants"]) == (3, 0, 3, 44)
    ray.kill(budget)


@pytest.mark.slow
def test_requests_per_window_hold_across_workers(ray_session, workers, server):
    ray = ray_session
    budget = _budget(ray, window_s=1.0)  # rpm counts starts per 1 s here
    _install(ray, workers, budget, "rpm")
    ray.get([w.run.remote(server.url, f"warm{i}", 1, 8) for i, w in enumerate(workers)], timeout=120)
    time.sleep(1.1)  # the warm-up starts leave the window
    server.reset()
    start = time.monotonic()
    ray.get([w.run.remote(server.url, f"r{i}", 3, 8, 4) for i, w in enumerate(workers)], timeout=120)
    elapsed = time.monotonic() - start
    arrivals = sorted(r.received_at for r in server.requests)
    assert len(arrivals) == 12
    # the budget grants 4 starts per 1 s window; at the server they arrive with some jitter (a loaded machine)
    most = max(sum(1 for t in arrivals if a <= t < a + 0.5) for a in arrivals)
    assert most == 4, [round(t - start, 3) for t in arrivals]  # never 12 at once
    assert 2.0 <= elapsed <= 4.0, elapsed  # starts at 0, 1 and 2 s
    stats = _stats(ray, budget, server)
    assert (stats["rpm"], stats["most_starts_in_window"], stats["in_flight"]) == (4, 4, 0)
    ray.kill(budget)


@pytest.mark.slow
def test_a_dead_workers_slots_come_back_with_release_holder(ray_session, workers, server):
    ray = ray_session
    budget = _budget(ray)
    _install(ray, workers[:2], budget, "alive")
    victim = _worker_class().remote()
    ray.get(victim.install.remote(budget, "victim"))
    held = victim.run.remote(server.url, "slow", 6, 3)  # holds all 3 slots, 3 more calls wait
    deadline = time.monotonic() + 60
    while _held_and_waiting(ray, budget, server) != (3, 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    ray.kill(victim)
    with pytest.raises(ray.exceptions.RayActorError):
        ray.get(held, timeout=60)
    stats = _stats(ray, budget, server)
    assert (stats["in_flight"], stats["waiting"]) == (3, 3)  # the dead worker's slots are still taken
    assert ray.get(budget.release_holder.remote("victim")) == 3
    stats = _stats(ray, budget, server)
    assert (stats["in_flight"], stats["waiting"]) == (0, 0)
    while server.in_flight and time.monotonic() < deadline:  # the dead worker's requests end at the server
        time.sleep(0.05)
    server.reset_peak()
    replies = ray.get([w.run.remote(server.url, f"after{i}", 6, 3) for i, w in enumerate(workers[:2])], timeout=60)
    assert [len(r) for r in replies] == [6, 6]
    assert server.peak_in_flight == 3  # the full budget again
    with pytest.raises(ray.exceptions.RayTaskError, match="released as dead"):
        ray.get(budget.acquire.remote(("openai", server.url + "/v1"), 3, None, "victim"))
    ray.kill(budget)


def _held_and_waiting(ray, budget, server) -> tuple[int, int] | None:
    stats = ray.get(budget.stats.remote()).get(("openai", server.url + "/v1"))
    return (stats["in_flight"], stats["waiting"]) if stats else None
