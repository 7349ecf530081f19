"""The labelling app never loses a submitted label: during a long ``labels import`` into the same SQLite file
the label is stored at once; when another writer keeps the file locked for longer than the store waits, the app
keeps the label, counts it, says so on the page and stores it with the next action, and what is still not
stored when ``ragassay label`` stops goes to a JSONL file that ``labels import`` takes. Real locks and a real
import on one file; the waits are events (a paused import, a lock released), never time."""

from __future__ import annotations

import re

import pytest
from contention import HeldLock, PauseAt, in_thread
from starlette.testclient import TestClient

from ragassay.labels import Label, load_rubric, read_jsonl
from ragassay.labels.queue import run_items
from ragassay.present.serve.label_app import LabelQueue, labelling_app
from ragassay.results import read_run
from ragassay.store import open_store, store_url

from labels_helpers import RUN_ID, SYSTEMS, write_label_run

CORRECT = load_rubric("correct")
SAMPLES = 600


@pytest.fixture
def db(tmp_path):
    store = open_store(store_url(str(tmp_path / "results.db"), tmp_path))
    write_label_run(store, RUN_ID, samples=SAMPLES)
    store.close()
    return tmp_path / "results.db"


@pytest.fixture
def app(db):
    """The labelling app over its own store of ``db``, which does not retry: a busy file shows at once."""
    store = open_store(store_url(str(db), db.parent), retry_s=0)
    queue = LabelQueue(store, RUN_ID, CORRECT, "ann", run_items(read_run(store, RUN_ID), CORRECT, sample=6, seed=1))
    yield TestClient(labelling_app(queue, token=None), base_url="http://127.0.0.1"), queue
    store.close()


def _post(client, index: int, value: str):
    page = client.get(f"/label/item/{index}").text
    form = {name: re.search(rf'name="{name}" value="([^"]+)"', page).group(1) for name in ("csrf", "item")}
    return client.post(f"/label/item/{index}", data={**form, "value": value}, follow_redirects=False)


def _imported(sample: int, system: str) -> Label:
    return Label(
        run_id=RUN_ID,
        sample_id=f"q{sample:02d}",
        system=system,
        rubric="correct",
        rubric_version=1,
        annotator="importer",
        value=1.0,
        labelled_at=1_000.0 + sample,
    )


def test_a_label_given_during_a_long_import_is_stored_at_once(db, app):
    client, queue = app
    importer = open_store(store_url(str(db), db.parent))
    labels = [_imported(i, system) for i in range(SAMPLES) for system in SYSTEMS]
    reads_of_labels = lambda sql: sql.lstrip().upper().startswith("SELECT") and "FROM labels" in sql  # noqa: E731
    try:
        with PauseAt(importer.engine, reads_of_labels, count=3) as pause:
            thread, outcome = in_thread(lambda: importer.add_labels(labels))
            assert pause.paused.wait(300), f"the import never reached its middle: {outcome}"
            response = _post(client, 0, "1")  # while the import waits in its middle
            assert response.status_code == 303, response.text
            assert [x.item_key for x in queue.store.labels(RUN_ID, annotator="ann")] == [queue.items[0].key]
            assert queue.pending == []
            pause.go()
            thread.join(300)
        assert outcome == {"result": len(labels)}
    finally:
        importer.close()


def test_a_label_the_locked_store_cannot_take_is_kept_shown_and_stored_with_the_next_action(db, app):
    client, queue = app
    with HeldLock(db) as lock:  # another writer's long transaction: the store gives up on it
        response = _post(client, 0, "0")
        assert response.status_code == 303, response.text  # accepted: the annotator goes on
        assert queue.store.labels(RUN_ID, annotator="ann") == [] and len(queue.pending) == 1
        page = client.get(response.headers["location"]).text
        notice = re.search(r'id="unstored">([^<]+)', page).group(1)
        assert notice.startswith("1 label(s) given here is not stored yet") and "locked" in notice
        assert "1 of 6 labelled" in page  # counted as given
        lock.release()
        client.get(response.headers["location"])  # the next action stores it
    (stored,) = queue.store.labels(RUN_ID, annotator="ann")
    assert (stored.item_key, stored.value) == (queue.items[0].key, 0.0) and queue.pending == []
    assert 'id="unstored"' not in client.get("/label/item/1").text


def test_labels_still_unstored_when_the_app_stops_go_to_a_file_that_imports(db, app, tmp_path):
    client, queue = app
    with HeldLock(db):
        assert _post(client, 0, "1").status_code == 303
        assert _post(client, 1, "0").status_code == 303
        kept = queue.close(tmp_path)
    assert kept is not None and queue.store.labels(RUN_ID, annotator="ann") == []
    labels = [label for _, label in read_jsonl(kept, {"correct": CORRECT})]
    assert [(x.item_key, x.value) for x in labels] == [(queue.items[0].key, 1.0), (queue.items[1].key, 0.0)]
    assert queue.store.add_labels(labels) == 2  # what ragassay labels import does with the file
    assert queue.close(tmp_path) is None  # nothing pending any more once the store takes them
