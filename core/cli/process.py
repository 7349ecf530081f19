"""The ``ragassay`` command's process policy: how its process starts and ends. The one place for it: nothing
below the command line imports this module, and only the console script (:func:`ragassay.cli.main.main`) calls
it, so a notebook, a test or a program calling ragassay in-process gets plain Python behaviour.

**Start** (:func:`start`): plugins are imported when a component of theirs is first looked up
(:func:`ragassay.plugin_manager.defer_plugin_imports`, guided by :mod:`ragassay.plugin_index`); a command that
lists plugins or components loads them all. ``RAGASSAY_PLUGIN_INDEX=off`` loads every plugin at start.

**End** (:func:`end`): the interpreter's own teardown spends about a quarter of a second freeing the objects the
LLM SDKs' and pydantic's classes are made of, work whose result nobody sees. Once the command has finished and its
output is written, the process ends directly, after doing what an ordinary exit does that someone relies on:

1. the wait for non-daemon threads: while such a thread is alive, the process exits the ordinary way;
2. ``sys.stdout`` and ``sys.stderr`` are flushed (a failing flush, e.g. a closed pipe, means the ordinary exit,
   which reports it);
3. the :mod:`atexit` handlers run, in the usual order (logging's shutdown; Ray's, OpenTelemetry's and coverage's;
   ``weakref.finalize`` clean-ups);
4. every file object still open is **closed**, wrappers before what they wrap (a ``gzip`` writer writes its
   trailer into its file, then the file is closed), self-deleting temporary files delete themselves, and every
   SQLite connection still open is closed, which rolls back an unfinished transaction and saves the write-ahead
   log into the database file;
5. :func:`os._exit` with the command's exit code.

Not done, as in any abrupt end: other ``__del__`` methods of objects still alive at exit (the interpreter does not
promise to call those either). ``RAGASSAY_ORDINARY_EXIT=1`` turns all of this off: the interpreter exits the
ordinary way, with its full teardown.
"""

from __future__ import annotations

import _io
import atexit
import gc
import itertools
import os
import sys
import tempfile
import threading

#: Set to 1 for the interpreter's ordinary exit (its full teardown) after every command.
ORDINARY_EXIT = "RAGASSAY_ORDINARY_EXIT"


def start() -> None:
    """Before the command runs: plugins are imported when first needed (see the module docstring)."""
    from ..plugin_manager import defer_plugin_imports

    defer_plugin_imports()


def end(exc: SystemExit) -> None:
    """End the process now with ``exc``'s exit code (see the module docstring); return when it must exit the
    ordinary way instead (the caller then re-raises ``exc``)."""
    code = 0 if exc.code is None else exc.code
    if os.environ.get(ORDINARY_EXIT, "") not in ("", "0"):
        return
    if not isinstance(code, int) or isinstance(code, bool) or not _threads_done():
        return
    if not _flush_standard_streams():
        return
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # not CPython
        return
    run_exit_handlers()
    close_open_files()
    if not _flush_standard_streams():
        code = code or 120  # the interpreter's own exit code when flushing standard output fails
    os._exit(code)


def _threads_done() -> bool:
    """True when only the main thread and daemon threads are left (an executor's idle worker threads are not
    daemons: a pool that was not shut down means the ordinary exit, which shuts it down)."""
    main = threading.main_thread()
    return not any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flush_standard_streams() -> bool:
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def close_open_files() -> None:
    """Close every file object, self-deleting temporary file and SQLite connection still alive, each wrapper
    before what it wraps, as the interpreter's teardown would free them. The standard streams stay open.

    Objects are picked by their exact class among the classes derived from the three bases: ``isinstance`` would
    ask some objects for ``__class__``, which a lazy proxy answers by loading what it stands for."""
    import sqlite3

    kinds = _derived(_io._IOBase) | _derived(sqlite3.Connection) | _derived(tempfile._TemporaryFileWrapper)
    objects = gc.get_objects()
    # picked without a Python-level loop over the ~170,000 objects of a run
    found = list(itertools.compress(objects, map(kinds.__contains__, map(type, objects))))
    del objects
    standard = _standard_streams()
    for obj in _outer_first([obj for obj in found if id(obj) not in standard]):
        try:
            obj.close()  # closing a closed file or connection does nothing
        except Exception:  # noqa: BLE001, S110 - at exit: a broken file or connection is not ours to report
            pass


def _outer_first(found: list) -> list:
    """``found`` ordered so that an object comes before every other found object it refers to (its wrapped file:
    a text wrapper's buffer, a buffer's raw file, a gzip writer's or temporary file's file)."""
    import graphlib

    ids = {id(obj): obj for obj in found}
    order = graphlib.TopologicalSorter()
    for obj in found:
        order.add(id(obj))
        for inner in _wrapped(obj, ids):
            order.add(inner, id(obj))  # inner after obj
    try:
        return [ids[key] for key in order.static_order()]
    except graphlib.CycleError:
        return found


def _wrapped(obj: object, ids: dict[int, object]) -> set[int]:
    """The ids of the found objects ``obj`` refers to, directly or through its attribute dictionary."""
    inner = set()
    for referent in gc.get_referents(obj):
        if id(referent) in ids:
            inner.add(id(referent))
        elif type(referent) is dict:
            inner.update(id(value) for value in referent.values() if id(value) in ids)
    inner.discard(id(obj))
    return inner


def _standard_streams() -> set[int]:
    """The ids of the standard streams and of the buffers and raw files beneath them."""
    streams = set()
    for stream in (sys.stdin, sys.stdout, sys.stderr, sys.__stdin__, sys.__stdout__, sys.__stderr__):
        while stream is not None and id(stream) not in streams:
            streams.add(id(stream))
            stream = getattr(stream, "buffer", None) or getattr(stream, "raw", None)
    return streams


def _derived(root: type) -> set[type]:
    """``root`` and every class derived from it, as defined now."""
    found, todo = set(), [root]
    while todo:
        cls = todo.pop()
        if cls not in found:
            found.add(cls)
            todo.extend(type.__subclasses__(cls))
    return found
