"""Run leases: at most one process works on a run (a config's fingerprint) at a time.

A lease is one row of ``run_leases`` keyed by the run's fingerprint. :func:`acquire` takes it with an INSERT
that a second process's INSERT conflicts with (atomic on SQLite and PostgreSQL alike); the holder refreshes
``heartbeat_at`` from a background thread and deletes the row when it stops (normally, on an error or on
Ctrl-C). A lease is stale when its heartbeat is older than ``stale_after_s`` or its owner is a dead process on
this host (a crash, ``kill -9``): the next run takes it over and says so.

>>> with store.lease(plan.fingerprint()) as lease:     # doctest: +SKIP
...     lease.attach(run_id)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from ..config.sequential import STOPPED_EARLY, stopped_detail
from ..errors import LeaseHeldError, StoreError
from .healing import Healer
from .schema import run_leases

HEARTBEAT_EVERY_S = 5.0
STALE_AFTER_S = 60.0
POLL_EVERY_S = 0.5


@dataclasses.dataclass(frozen=True)
class Holder:
    """Who holds (or held) a lease, as stored in its row."""

    key: str
    owner: str
    host: str
    pid: int
    acquired_at: float
    heartbeat_at: float
    run_id: str | None = None

    def describe(self) -> str:
        since = dt.datetime.fromtimestamp(self.acquired_at).strftime("%Y-%m-%d %H:%M:%S")
        return f"pid {self.pid} on {self.host} since {since}"


def stale_reason(holder: Holder, stale_after_s: float = STALE_AFTER_S, now: float | None = None) -> str | None:
    """Why ``holder``'s lease is stale (its process died, its heartbeat stopped), or None if it is live."""
    now = time.time() if now is None else now
    if holder.host == socket.gethostname() and not _pid_alive(holder.pid):
        return f"process {holder.pid} on {holder.host} is gone"
    silent = now - holder.heartbeat_at
    if silent > stale_after_s:
        return f"no heartbeat for {silent:.0f}s (more than {stale_after_s:.0f}s)"
    return None


def _pid_alive(pid: int) -> bool:
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there; rely on the heartbeat
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Lease:
    """A held lease: refreshed by a daemon thread until :meth:`release`. Use it as a context manager."""

    def __init__(
        self,
        engine: Engine,
        holder: Holder,
        *,
        heartbeat_s: float = HEARTBEAT_EVERY_S,
        notes: list[str] | None = None,
        healer: Healer | None = None,
    ):
        self.engine = engine
        self.holder = holder
        self.healer = healer or _healer(engine)
        self.notes = notes or []  # e.g. that a stale lease was taken over
        self.lost: str | None = None  # set when another process took the lease over
        self._heartbeat_s = heartbeat_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"ragassay-lease-{holder.key[:8]}", daemon=True)
        self._thread.start()

    @property
    def key(self) -> str:
        return self.holder.key

    def attach(self, run_id: str) -> None:
        """Record which stored run this lease covers (``ragassay runs`` shows it as running)."""
        self.healer(lambda: self._update(run_id=run_id))

    def heartbeat(self) -> bool:
        """Refresh the heartbeat now; False (and :attr:`lost` set) if the lease is no longer ours."""
        if not self._update(heartbeat_at=time.time()):
            self.lost = self.lost or "another run took this run's lease over (this run's heartbeat had stopped)"
            return False
        return True

    def release(self) -> None:
        """Stop the heartbeat and delete the lease row (only if it is still ours). Safe to call twice.

        A database that cannot delete it (a full disk, a server gone) leaves the row: it is stale at once for a
        run on this host (this process is gone) and after ``stale_after_s`` elsewhere, and the next run takes
        it over. The error that stopped the run is the one reported, not this one.
        """
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * self._heartbeat_s)
        try:
            self.healer(self._delete)
        except StoreError:
            pass

    def _delete(self) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                delete(run_leases).where(run_leases.c.key == self.key, run_leases.c.owner == self.holder.owner)
            )

    def _update(self, **values: Any) -> bool:
        with self.engine.begin() as conn:
            result = conn.execute(
                update(run_leases)
                .where(run_leases.c.key == self.key, run_leases.c.owner == self.holder.owner)
                .values(**values)
            )
        return result.rowcount == 1

    def _beat(self) -> None:
        while not self._stop.wait(self._heartbeat_s):
            try:
                if not self.heartbeat():
                    return
            except Exception:  # noqa: BLE001 - a busy database: try again at the next beat
                continue

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.release()


def acquire(
    engine: Engine,
    key: str,
    *,
    wait: bool = False,
    on_wait: Callable[[Holder], None] | None = None,
    stale_after_s: float = STALE_AFTER_S,
    heartbeat_s: float = HEARTBEAT_EVERY_S,
    poll_s: float = POLL_EVERY_S,
    healer: Healer | None = None,
) -> Lease:
    """Take the lease ``key`` for this process, taking over a stale one.

    If a live process holds it: raise :class:`LeaseHeldError` (who holds it, since when, what to do), or with
    ``wait`` poll until it is released, calling ``on_wait(holder)`` once when the wait starts. ``healer``
    (the store's) retries transient database errors and explains permanent ones.
    """
    me = Holder(key, uuid.uuid4().hex, socket.gethostname(), os.getpid(), time.time(), time.time())
    healer = healer or _healer(engine)
    notes: list[str] = []
    announced = False
    while True:
        if healer(lambda: _try_insert(engine, me)):
            return Lease(engine, me, heartbeat_s=heartbeat_s, notes=notes, healer=healer)
        holder = healer(lambda: _holder(engine, key))
        if holder is None:
            continue  # released between our insert and our read: try again
        if holder.owner == me.owner:  # our insert committed, but the connection was lost before we heard it
            return Lease(engine, me, heartbeat_s=heartbeat_s, notes=notes, healer=healer)
        reason = stale_reason(holder, stale_after_s)
        if reason is not None:
            if healer(functools.partial(_take_over, engine, holder, me)):
                notes.append(
                    f"took over the lease of an earlier run ({holder.describe()}): {reason}; resuming what it stored"
                )
                return Lease(engine, me, heartbeat_s=heartbeat_s, notes=notes, healer=healer)
            continue
        if not wait:
            raise LeaseHeldError(
                f"this config is already being run by {holder.describe()}. Wait for it with 'ragassay run --wait' "
                f"(it then resumes and skips what that run stored), or stop that process first."
            )
        if not announced and on_wait is not None:
            on_wait(holder)
        announced = True
        time.sleep(poll_s)


def _healer(engine: Engine) -> Healer:
    """A healer for a bare engine (the store passes its own, with the configured deadline)."""
    return Healer(engine.url.render_as_string(hide_password=True))


def _try_insert(engine: Engine, me: Holder) -> bool:
    try:
        with engine.begin() as conn:
            conn.execute(insert(run_leases).values(**dataclasses.asdict(me)))
    except IntegrityError:
        return False
    return True


def _holder(engine: Engine, key: str) -> Holder | None:
    with engine.connect() as conn:
        row = conn.execute(select(run_leases).where(run_leases.c.key == key)).first()
    return Holder(**row._mapping) if row else None


def _take_over(engine: Engine, stale: Holder, me: Holder) -> bool:
    """Replace a stale holder by ``me``, unless someone else did first (compare-and-swap on owner and beat)."""
    with engine.begin() as conn:
        result = conn.execute(
            update(run_leases)
            .where(
                run_leases.c.key == stale.key,
                run_leases.c.owner == stale.owner,
                run_leases.c.heartbeat_at == stale.heartbeat_at,
            )
            .values(**{**dataclasses.asdict(me), "run_id": None})
        )
    return result.rowcount == 1


def live_holders(conn: Any, stale_after_s: float = STALE_AFTER_S) -> dict[str, Holder]:
    """Live leases by the run id they cover (leases not yet attached to a run are left out)."""
    holders = [Holder(**row._mapping) for row in conn.execute(select(run_leases))]
    return {h.run_id: h for h in holders if h.run_id and stale_reason(h, stale_after_s) is None}


def run_state(run: dict[str, Any], holder: Holder | None) -> tuple[str, str]:
    """(state, detail) of a stored run, from its lease rather than from its status column.

    ``running``: a live process holds its lease; ``complete``: it finished with every unit stored;
    ``budget-limited``: its last session stopped at its budget (:mod:`ragassay.llm.budget`);
    ``stopped early``: a sequential run (stored status ``settled``) that stopped once no comparison was open,
    each settled or at its maximum sample count (:func:`ragassay.config.sequential.stopped_detail` counts them);
    ``failed``: its first session stopped on an error before any work (:mod:`ragassay.engine.runner`);
    ``interrupted``: no live lease and work is missing (a crash, Ctrl-C, ``kill -9``), so a re-run resumes it.
    """
    if holder is not None:
        return "running", f"pid {holder.pid} on {holder.host}"
    expected = run.get("systems", 0) * run.get("sample_count", 0)
    if run.get("status") == "complete" and run.get("outputs", 0) >= expected:
        return "complete", ""
    if run.get("status") == "budget-limited":
        return "budget-limited", "re-run with a larger budget to resume"
    if run.get("status") == "settled":
        return STOPPED_EARLY, stopped_detail(_spec(run.get("spec_json")))
    if run.get("status") == "failed":
        return "failed", "stopped on an error before any work (see its warnings); fix it and run again"
    return "interrupted", "run again to resume"


def _spec(text: str | None) -> dict[str, Any]:
    """A run's stored spec, or {} when it cannot be read (the state detail then says less, the listing goes on)."""
    try:
        spec = json.loads(text or "{}")
    except ValueError:
        return {}
    return spec if isinstance(spec, dict) else {}
