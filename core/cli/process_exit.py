"""Ending the ``ragassay`` process once its command is done, without the interpreter's teardown.

After a run, the interpreter's own finalization spends about 0.25 s freeing the roughly 130,000 objects that the
LLM SDKs' and pydantic's classes are made of, work whose result nobody sees. The console script (and only it:
not ``cli`` called in-process by click's ``CliRunner``, a test or a notebook) ends the process directly once the
command has finished and its output is written, after doing what an ordinary exit does that someone relies on:

1. the wait for non-daemon threads: when such a thread is still alive, nothing here happens and the interpreter
   exits the ordinary way (it waits for that thread);
2. ``sys.stdout`` and ``sys.stderr`` are flushed (a failing flush, e.g. a closed pipe, also means the ordinary
   exit, which reports it as before);
3. the :mod:`atexit` handlers run, in the usual order (logging's shutdown, which flushes and closes its
   handlers; Ray's, OpenTelemetry's and coverage's shutdown; ``tempfile``/``weakref.finalize`` clean-ups);
4. what the teardown would do to objects still alive: every open file object is flushed, and every open
   SQLite connection is closed, which rolls back an unfinished transaction and saves the write-ahead log into
   the database file, as when the connection is freed;
5. :func:`os._exit` with the command's exit code.

Not done, as in any abrupt end: ``__del__`` methods of objects still alive at exit (the interpreter does not
promise to call those either).
"""

from __future__ import annotations

import _io
import atexit
import gc
import itertools
import os
import sys
import threading


def end_process(exc: SystemExit) -> None:
    """End the process now with ``exc``'s exit code (see the module docstring); return when it must exit the
    ordinary way instead (the caller then re-raises ``exc``)."""
    code = exc.code
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool) or not _threads_done():
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # not CPython
        return
    run_exit_handlers()
    _release_open_resources()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = code or 120  # the interpreter's own exit code when flushing standard output fails
    os._exit(code)


def ordinary_exit() -> None:
    """Before the interpreter's ordinary exit: undo :func:`gc.freeze` (ragassay.collector), so that its
    teardown finalizes every object, frozen or not, as it would without the freezing."""
    gc.unfreeze()


def _threads_done() -> bool:
    """True when only the main thread and daemon threads are left (an executor's idle worker threads are not
    daemons: a pool that was not shut down means the ordinary exit, which shuts it down)."""
    main = threading.main_thread()
    return not any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _release_open_resources() -> None:
    """Flush every open file object and close every SQLite connection still alive (the interpreter's teardown
    would free them, with the same effect). Objects are picked by their exact class among the subclasses of the
    two base classes: ``isinstance`` would ask some objects for ``__class__``, which a lazy proxy answers by
    loading what it stands for."""
    import sqlite3

    files, connections = _subclasses(_io._IOBase), _subclasses(sqlite3.Connection)
    gc.unfreeze()  # gc.get_objects() does not list frozen objects (ragassay.collector freezes some)
    objects = gc.get_objects()
    # picked without a Python-level loop over the ~170,000 objects of a run (about 4 times faster)
    found = list(itertools.compress(objects, map((files | connections).__contains__, map(type, objects))))
    del objects
    for obj in found:
        try:
            if type(obj) in connections:
                obj.close()  # closing a closed connection does nothing
            elif not obj.closed:
                obj.flush()
        except Exception:  # noqa: BLE001, S110 - at exit: a broken file or connection is not ours to report
            pass


def _subclasses(root: type) -> set[type]:
    """``root`` and every class derived from it, as defined now."""
    found, todo = set(), [root]
    while todo:
        cls = todo.pop()
        if cls not in found:
            found.add(cls)
            todo.extend(type.__subclasses__(cls))
    return found
