"""The preparer of ``ragassay serve`` over a real SQLite store: pages prepared in the background are served
without reading the run again (statements counted on the store's engine, the cache's own count of entries), a
write to the run shows on the next request (never the older version), a failing preparation is logged and the
thread goes on, and the thread stops with the app. No timing: the tests wait for the preparer to be idle."""

from __future__ import annotations

import contextlib
import logging
import re
import threading

import pytest
from sqlalchemy import event
from starlette.testclient import TestClient
from test_serve_cache import RUN_ID, _below, _unit, growing  # noqa: F401 (the fixture)

from ragassay.present.serve import create_app
from ragassay.present.serve.cache import RunCache
from ragassay.present.serve.prepare import Preparer

from html_report_helpers import write_planted_run

RUN = "/runs/planted-run-0001"
DEFAULT_PAGES = [RUN, f"{RUN}/cost", f"{RUN}/breakdowns", f"{RUN}/failures"]
WAIT_S = 120  # only a broken preparer takes long


@pytest.fixture
def planted(tmp_path):
    store, _ = write_planted_run(tmp_path / "results.db")
    yield store
    store.close()


def running(app) -> TestClient:
    """A client that runs the app's lifespan (so its preparer) while used as a context manager."""
    return TestClient(app, base_url="http://127.0.0.1")


@contextlib.contextmanager
def statements(store):
    """The SQL statements the store runs inside the block for the requests (the preparer's own are left out)."""
    seen: list[str] = []

    def record(conn, cursor, statement, *args):
        if threading.current_thread().name != "ragassay-serve-prepare":
            seen.append(statement)

    event.listen(store.engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(store.engine, "before_cursor_execute", record)


def only_the_version_asked(store, web, path: str) -> str:
    """Load ``path``; assert that the store answered only the run's version (nothing of the run read)."""
    with statements(store) as seen:
        page = web.get(path)
    assert page.status_code == 200, (path, page.text[:300])
    assert len(seen) == 1 and "FROM runs" in seen[0] and "run_samples" not in seen[0], (path, seen)
    return page.text


def test_the_newest_runs_pages_are_prepared_at_start_and_served_without_reading_the_run(planted):
    app = create_app(planted, token=None)
    with running(app) as web:
        assert app.state.preparer.alive and app.state.preparer.wait_idle(WAIT_S)
        assert app.state.preparer.prepared >= 5 and app.state.preparer.failed == 0  # the run's tabs and 4 pages
        for path in DEFAULT_PAGES:
            assert "planted" in only_the_version_asked(planted, web, path)
        assert app.state.runs.reads == 1  # one entry, read once, by the preparer


def test_a_page_loaded_brings_the_other_default_pages_of_its_run(planted):
    app = create_app(planted, token=None)
    app.state.preparer = Preparer(app.state.runs, newest=0)  # nothing at start
    with running(app) as web:
        assert app.state.preparer.wait_idle(WAIT_S) and app.state.preparer.prepared == 0
        with statements(planted) as first:
            assert web.get(f"{RUN}/failures").status_code == 200  # read by the request itself
        assert any("FROM run_samples" in s for s in first)
        assert app.state.preparer.wait_idle(WAIT_S)
        for path in DEFAULT_PAGES[:3]:
            only_the_version_asked(planted, web, path)


def test_a_write_shows_on_the_next_request_and_its_pages_are_prepared_again(growing):  # noqa: F811
    store = growing
    app = create_app(store, token=None)
    app.state.preparer = Preparer(app.state.runs, poll_s=0.05)
    failures = f"/runs/{RUN_ID}/failures"
    with running(app) as web:
        store.write_units(RUN_ID, [_unit(0, 0.5)])
        assert _below(web, 0.6) == 1  # this filtered page's recipe is now kept with the run
        assert app.state.preparer.wait_idle(WAIT_S)
        store.write_units(RUN_ID, [_unit(1, 0.1)])
        assert _below(web, 0.6) == 2  # at once: the new version, never the kept older one
        store.write_units(RUN_ID, [_unit(2, 0.2)])
        version = store.run_version(RUN_ID)[1]
        seen = lambda: app.state.runs.kept()[0].version == version  # noqa: E731 - a poll saw the last write
        assert app.state.preparer.wait_idle(WAIT_S, until=seen), "the new version was never prepared"
        entry = app.state.runs.kept()[0]
        assert entry.has(("failures", _filters(metric="token_recall", below=0.6)))  # the page viewed, prepared
        for path in [failures, f"/runs/{RUN_ID}/cost"]:
            only_the_version_asked(store, web, path)  # the default pages, prepared at the new version
        text = only_the_version_asked(store, web, f"{failures}?metric=token_recall&below=0.6")
        assert re.search(r'id="failure-count">(\d+) of', text).group(1) == "3"  # with the last write's value


class Logged(logging.Handler):
    """Records of the ``ragassay.serve`` logger, and an event set when one with ``text`` in its message arrives
    (from the preparer's thread): a test waits for that event, never for time."""

    def __init__(self, text: str):
        super().__init__(logging.WARNING)
        self.text, self.records, self.arrived = text, [], threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if self.text in record.getMessage():
            self.arrived.set()

    @contextlib.contextmanager
    def listening(self):
        logger = logging.getLogger("ragassay.serve")
        logger.addHandler(self)
        try:
            yield self
        finally:
            logger.removeHandler(self)


def test_a_failing_preparation_is_logged_and_the_thread_goes_on(growing):  # noqa: F811
    store = growing
    store.write_units(RUN_ID, [_unit(0, 0.5)])
    cache = RunCache(store)
    preparer = Preparer(cache, newest=0, poll_s=0.05)

    def broken(entry):
        raise ValueError("a broken page")

    with pytest.raises(ValueError):
        cache.entry(RUN_ID).page(("broken",), broken)  # a page whose computation fails, viewed once
    with Logged("preparing ('broken',) of run growing-run failed").listening() as logged:
        preparer.start()
        try:
            store.write_units(RUN_ID, [_unit(1, 0.1)])  # a new version: the preparer computes its pages
            # the events asserted: the broken page's failure logged, then the preparer idle after the pages
            # that follow it (wait_idle blocks on the preparer's condition; WAIT_S only stops a hang)
            assert logged.arrived.wait(WAIT_S), f"the broken page was never prepared: {logged.records}"
            assert preparer.wait_idle(WAIT_S), "the preparer never finished the pages after the broken one"
            assert preparer.alive
            (failure,) = [r for r in logged.records if logged.text in r.getMessage()]
            assert "a broken page" in logging.Formatter().formatException(failure.exc_info)  # the traceback
            entry = cache.entry(RUN_ID)
            assert entry.has(("failures", _filters())) and not entry.has(("broken",))  # the others were prepared
        finally:
            preparer.stop()
    assert not preparer.alive


def _filters(**given):
    from ragassay.present.serve.failures import Filters

    return Filters(**given)


def test_the_thread_stops_with_the_app(planted):
    app = create_app(planted, token=None)
    with running(app):
        assert app.state.preparer.alive
        assert "ragassay-serve-prepare" in {t.name for t in threading.enumerate()}
    assert not app.state.preparer.alive
    assert "ragassay-serve-prepare" not in {t.name for t in threading.enumerate()}
    assert create_app(planted, token=None, prepare=False).state.preparer is None
