"""Database errors that heal and errors that explain.

A results database fails in two ways that are not ragassay's fault:

- **transient**: the connection was lost, the server is restarting or refuses connections for a moment, the
  file is locked by another writer, a transaction lost a serialization race or a deadlock. :class:`Healer`
  retries these with exponential backoff (with jitter) until a deadline, ``[project] results_retry_s``
  (:data:`DEFAULT_RETRY_S` by default); every retry replays a whole transaction, so nothing is half-written.
- **permanent**: the disk is full, the file or its folder is read-only, permission is denied, the path cannot
  be created, the server refuses the user. These stop at once with :class:`~ragassay.errors.StoreUnavailableError`:
  one line naming the database (its password redacted), the cause and the fix, never the SQL or its parameters.

Anything else (a constraint violated by a bug, a malformed query) is raised as it is.

>>> healer = Healer("results.db")
>>> healer(lambda: 42)
42
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import random
import time
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..errors import StoreUnavailableError
from .urls import RESULTS_KEY

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_RETRY_S = 60.0
#: How long a SQLite connection waits for another writer's lock before "database is locked" (PRAGMA busy_timeout).
SQLITE_BUSY_TIMEOUT_MS = 10_000
RETRY_KEY = "[project] results_retry_s"
FIRST_DELAY_S = 0.01
MAX_DELAY_S = 2.0

_TRANSIENT_SQLSTATES = {
    "40001": "a transaction lost a serialization race",
    "40P01": "a deadlock with another writer",
    "55P03": "a lock held by another writer",
    "53300": "the server has too many connections",
    "57P01": "the server is shutting down or restarting",
    "57P02": "the server crashed and is restarting",
    "57P03": "the server is starting up",
    "53200": "the server is out of memory",
}
_PERMANENT_SQLSTATES = {
    "53100": ("the server's disk is full", "free space on the database server"),
    "25006": ("the server is read-only (a standby?)", "point {key} at the primary server"),
    "42501": ("permission denied", "grant the user the rights to write the database"),
    "28000": ("the server refused the user", "check the user and the password in {key}"),
    "28P01": ("the server refused the password", "check the user and the password in {key}"),
    "3D000": ("the database does not exist", "create the database, or fix the URL in {key}"),
}
# SQLite (result code name, then the message text older Pythons give)
_SQLITE_TRANSIENT = (("SQLITE_BUSY", "database is locked"), ("SQLITE_LOCKED", "database table is locked"))
_SQLITE_PERMANENT = (
    ("SQLITE_FULL", "database or disk is full", "the disk is full", "free space on the disk that holds it"),
    (
        "SQLITE_READONLY",
        "readonly database",
        "the file or its folder is read-only",
        "make the file and its folder writable, or point {key} at a writable path",
    ),
    (
        "SQLITE_CANTOPEN",
        "unable to open database file",
        "the file cannot be opened or created (a missing or read-only folder, or no permission)",
        "make the folder exist and be writable, or point {key} at a writable path",
    ),
    (
        "SQLITE_IOERR",
        "disk i/o error",
        "a disk I/O error (a full disk, a file-size limit, or a failing disk)",
        "check the disk and free space on it",
    ),
    ("SQLITE_PERM", "access permission denied", "permission denied", "make the file and its folder writable"),
    (
        "SQLITE_NOTADB",
        "file is not a database",
        "the file is not a SQLite database",
        "point {key} at a ragassay results file",
    ),
    (
        "SQLITE_CORRUPT",
        "malformed",
        "the file is damaged",
        "restore it from a backup, or point {key} at a new file",
    ),
)
_OS_ERRORS = {
    errno.ENOSPC: ("the disk is full", "free space on the disk that holds it"),
    errno.EDQUOT: ("the disk quota is exhausted", "free space or raise the quota"),
    errno.EFBIG: ("the file reached the file-size limit", "raise the limit (ulimit -f) or free space"),
    errno.EROFS: ("the file system is read-only", "point {key} at a writable path"),
    errno.EACCES: ("permission denied", "make the folder writable, or point {key} at a writable path"),
    errno.EPERM: ("permission denied", "make the folder writable, or point {key} at a writable path"),
    errno.ENOENT: ("the path cannot be created", "point {key} at a path in a folder you can write"),
    errno.ENOTDIR: ("a part of the path is not a folder", "point {key} at a path in a folder you can write"),
    errno.EIO: ("a disk I/O error", "check the disk"),
}
_CONNECTION_WORDS = (
    "connection refused",
    "server closed the connection",
    "connection reset",
    "connection is closed",
    "connection timed out",
    "could not connect",
    "consuming input failed",
    "terminating connection",
    "the database system is",
    "broken pipe",
    "ssl syscall",
    "no connection to the server",
)


@dataclasses.dataclass(frozen=True)
class Diagnosis:
    """What went wrong with the database: whether it may heal, the cause and (for permanent ones) the fix."""

    transient: bool
    cause: str
    detail: str = ""  # the driver's own first line, without SQL or parameters
    fix: str = ""


def diagnose(exc: BaseException) -> Diagnosis | None:
    """Classify an error raised while using a results database; None for errors that are not the
    infrastructure's (a constraint, a malformed query: bugs, raised as they are)."""
    if isinstance(exc, OSError):
        cause, fix = _OS_ERRORS.get(exc.errno or 0, ("an operating-system error", "check the path and the disk"))
        return Diagnosis(False, cause, exc.strerror or str(exc), fix)
    orig = getattr(exc, "orig", None) or exc
    detail = _first_line(orig)
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate in _TRANSIENT_SQLSTATES or (sqlstate or "").startswith("08"):
        return Diagnosis(True, _TRANSIENT_SQLSTATES.get(sqlstate, "the connection to the server was lost"), detail)
    if sqlstate in _PERMANENT_SQLSTATES:
        cause, fix = _PERMANENT_SQLSTATES[sqlstate]
        return Diagnosis(False, cause, detail, fix)
    lowered = detail.lower()
    name = getattr(orig, "sqlite_errorname", None) or ""
    for code, words in _SQLITE_TRANSIENT:
        if name.startswith(code) or words in lowered:
            return Diagnosis(True, "the file is locked by another writer", detail)
    for code, words, cause, fix in _SQLITE_PERMANENT:
        if name.startswith(code) or words in lowered:
            return Diagnosis(False, cause, detail, fix)
    if getattr(exc, "connection_invalidated", False) or any(word in lowered for word in _CONNECTION_WORDS):
        return Diagnosis(True, "the connection to the server was lost", detail)
    return None


def explain(where: str, diagnosis: Diagnosis, *, key: str = RESULTS_KEY, waited_s: float | None = None) -> str:
    """One line: the database, what went wrong, what to do, and that what is stored is kept."""
    shown = diagnosis.detail and diagnosis.detail.lower() not in diagnosis.cause.lower()
    detail = f" ({diagnosis.detail})" if shown else ""
    if diagnosis.transient:
        what = f"did not recover{_within(waited_s)}: {diagnosis.cause}{detail}"
        fix = f"check that the database is up and reachable, or allow longer with {RETRY_KEY}"
    else:
        what = f"{diagnosis.cause}{detail}"
        fix = diagnosis.fix.format(key=key)
    return (
        f"results database {where}: {what}. {fix[:1].upper()}{fix[1:]}, then run the same command again: "
        "everything stored so far is kept and the run resumes."
    )


@dataclasses.dataclass
class Healer:
    """Runs database work, retrying transient errors until ``retry_s`` has passed and explaining the rest.

    :param where: the database as it may be shown (a path, or a URL with its password redacted).
    :param retry_s: how long transient errors are retried (0: not at all).
    :param key: the config key that names the database, used in fixes.
    :param redact: hides secrets (the URL's password) in the driver's messages.

    Once it has given up, later calls try only once, and fail with the same message: the end of a failed run
    (its status, its lease) does not wait a second deadline. A call that succeeds again ends the outage (a
    long-running server, ``ragassay label`` or ``traces receive``, waits out the next one in full).
    """

    where: str
    retry_s: float = DEFAULT_RETRY_S
    key: str = RESULTS_KEY
    redact: Callable[[str], str] = str
    gave_up: str | None = None
    recoveries: list[str] = dataclasses.field(default_factory=list)  # one line per outage it waited out
    sleep: Callable[[float], None] = time.sleep  # timing only: what is stored does not depend on it

    def __call__(self, work: Callable[[], T], *, also_transient: Callable[[BaseException], bool] | None = None) -> T:
        """``work()``, retried while it fails transiently (``also_transient``: further errors worth a retry,
        e.g. a write conflict); raises :class:`StoreUnavailableError` when it cannot succeed."""
        start = time.monotonic()
        tries = 0
        outage: Diagnosis | None = None
        while True:
            try:
                result = work()
            except Exception as exc:
                diagnosis = diagnose(exc)
                conflict = diagnosis is None and also_transient is not None and also_transient(exc)
                if conflict:
                    diagnosis = Diagnosis(True, "a conflict with another writer", _first_line(exc))
                if diagnosis is None:
                    raise
                outage = outage if conflict else diagnosis
                waited = time.monotonic() - start
                if not diagnosis.transient or self.gave_up or waited >= self.retry_s:
                    raise self._give_up(diagnosis, waited) from exc
                delay = min(MAX_DELAY_S, FIRST_DELAY_S * 2**tries) * random.uniform(0.5, 1.0)
                self.sleep(min(delay, self.retry_s - waited))  # the last try comes at the deadline, not before
                tries += 1
            else:
                self.gave_up = None  # the database answers again: the next outage gets its own deadline
                if outage is not None:
                    self._recovered(outage, time.monotonic() - start)
                return result

    def _give_up(self, diagnosis: Diagnosis, waited_s: float | None) -> StoreUnavailableError:
        """The error that stops the work: the first explanation of this outage (a later call that fails at once,
        e.g. the end of the run recording its status, says the same, never "did not recover within 0 s")."""
        if self.gave_up is None:
            diagnosis = dataclasses.replace(diagnosis, detail=self.redact(diagnosis.detail))
            self.gave_up = explain(self.where, diagnosis, key=self.key, waited_s=waited_s)
        return StoreUnavailableError(self.gave_up)

    def explained(self, exc: BaseException) -> StoreUnavailableError | None:
        """The one-line error for an infrastructure failure that cannot be retried where it happened (a stream
        broken after its first rows); None for errors that are not the infrastructure's."""
        diagnosis = diagnose(exc)
        if diagnosis is None:
            return None
        return self._give_up(diagnosis, None)

    def _recovered(self, outage: Diagnosis, waited_s: float) -> None:
        """Note an outage that was waited out (shown with the run's warnings): nothing silent."""
        note = (
            f"results database {self.where} was unavailable for {waited_s:.1f} s ({outage.cause}); "
            "the work was retried and nothing was lost"
        )
        if len(self.recoveries) < 20:
            self.recoveries.append(note)


def _within(waited_s: float | None) -> str:
    """`` within 5.2 s`` (tenths under 10 s, whole seconds above); nothing when the wait is not known."""
    if waited_s is None:
        return ""
    return f" within {waited_s:.1f} s" if waited_s < 10 else f" within {waited_s:.0f} s"


def _first_line(error: BaseException) -> str:
    """The first line of an error's message: drivers put the SQL and parameters on later lines."""
    text = str(getattr(error, "orig", None) or error).strip()
    if text.startswith("(") and ") " in text:  # SQLAlchemy's "(module.Class) message"
        text = text.split(") ", 1)[1]
    return text.splitlines()[0].strip() if text else type(error).__name__


def healing(method: F) -> F:
    """Run a store method under its store's ``healer``: transient database errors are retried (the whole
    method again: each is one transaction or one read), permanent ones explained."""

    @functools.wraps(method)
    def healed(self: Any, *args: Any, **kwargs: Any) -> Any:
        return self.healer(lambda: method(self, *args, **kwargs))

    return healed  # type: ignore[return-value]


_END = object()


def healing_stream(method: F) -> F:
    """:func:`healing` for a store method that streams rows (a generator): a transient error before the first
    row restarts the stream; an error after it (a stream cannot resume where it broke, and the rows already
    handed over cannot be taken back) is explained like a permanent one."""

    @functools.wraps(method)
    def healed(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
        def first_row() -> tuple[Iterator[Any], Any]:
            rows = method(self, *args, **kwargs)
            try:
                return rows, next(rows, _END)
            except BaseException:
                rows.close()
                raise

        rows, row = self.healer(first_row)
        try:
            while row is not _END:
                yield row
                try:
                    row = next(rows, _END)
                except Exception as exc:
                    error = self.healer.explained(exc)
                    if error is None:
                        raise
                    raise error from exc
        finally:
            rows.close()

    return healed  # type: ignore[return-value]
