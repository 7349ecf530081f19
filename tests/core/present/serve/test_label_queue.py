"""The labelling queue over the app (Starlette TestClient): blind pages, seeded items and pair order, labels by
POST, skip, undo, resume after a restart, and the guards of the only writing endpoints (CSRF token, the item of
the queue, the rubric's values, the run of the queue)."""

from __future__ import annotations

import re

import pytest

from ragassay.errors import ConfigError
from ragassay.labels import load_rubric
from ragassay.labels.queue import run_items
from ragassay.present.serve.label_app import LabelQueue, labelling_app
from ragassay.results import read_run

from labels_helpers import OTHER_RUN_ID, PLANT, RUN_ID, SYSTEMS, VERDICT_TEXT, open_label_store, write_label_run

CORRECT = load_rubric("correct")
PREFERENCE = load_rubric("preference")


@pytest.fixture
def store(tmp_path):
    store = open_label_store(tmp_path / "results.db")
    yield store
    store.close()


def _client(store, rubric=CORRECT, annotator="ann", sample=10, seed=7, run_id=RUN_ID):
    from starlette.testclient import TestClient

    items = run_items(read_run(store, run_id), rubric, sample=sample, seed=seed)
    queue = LabelQueue(store, run_id, rubric, annotator, items)
    return TestClient(labelling_app(queue, token=None), base_url="http://127.0.0.1"), queue


def _form(page: str) -> dict[str, str]:
    return {
        "csrf": re.search(r'name="csrf" value="([^"]+)"', page).group(1),
        "item": re.search(r'name="item" value="([^"]+)"', page).group(1),
    }


def _label(client, index: int, value: str):
    page = client.get(f"/label/item/{index}")
    assert page.status_code == 200
    return client.post(f"/label/item/{index}", data={**_form(page.text), "value": value}, follow_redirects=False)


def test_every_page_is_blind_and_shows_text_as_text(store):
    client, queue = _client(store, sample=None)
    assert len(queue.items) == 48  # 2 systems x 24 samples
    pages = [client.get(f"/label/item/{i}").text for i in range(len(queue.items))]
    pair_client, pair_queue = _client(store, PREFERENCE, sample=None)
    pages += [pair_client.get(f"/label/item/{i}").text for i in range(len(pair_queue.items))]
    assert all("What is fact number" in page for page in pages)  # every page rendered
    for page in pages:
        assert not any(name in page for name in SYSTEMS) and "secret" not in page
        assert VERDICT_TEXT not in page and "judge" not in page.lower()
        assert PLANT not in page  # the planted script never appears as markup
    planted = [p for p in pages if "Planted" in p]
    assert planted and all("&lt;script&gt;alert(1)&lt;/script&gt;" in p for p in planted)
    assert "Context " in pages[0]
    for hidden in ("/runs", f"/runs/{RUN_ID}", "/compare"):  # the results pages are not served while labelling
        assert client.get(hidden).status_code == 404
    assert client.get("/", follow_redirects=False).headers["location"] == "/label"


def test_items_and_pair_order_come_from_the_seed_not_from_the_annotator(store):
    one = run_items(read_run(store, RUN_ID), CORRECT, sample=20, seed=3)
    assert one == run_items(read_run(store, RUN_ID), CORRECT, sample=20, seed=3)
    assert one != run_items(read_run(store, RUN_ID), CORRECT, sample=20, seed=4)
    assert len(set(one)) == 20 and {item.system for item in one} == set(SYSTEMS)
    pairs = run_items(read_run(store, RUN_ID), PREFERENCE, sample=None, seed=3)
    assert len(pairs) == 24 and {item.systems for item in pairs} == {SYSTEMS, SYSTEMS[::-1]}  # both orders drawn
    client, queue = _client(store, PREFERENCE, sample=None, seed=3)
    for index in (0, 1, 2):  # the answer shown first is the first system's
        first = queue.items[index].systems[0]
        page = client.get(f"/label/item/{index}").text
        kinds = re.findall(r"Answer \d+ of the (first|second) kind", page)
        assert kinds == (["first", "second"] if first == SYSTEMS[0] else ["second", "first"])
    response = _label(client, 0, "2")
    labels = store.labels(RUN_ID, "preference")
    assert response.status_code == 303 and [(x.systems, x.value) for x in labels] == [(queue.items[0].systems, 2.0)]
    with pytest.raises(ConfigError, match="compares two systems"):
        run_items(read_run(store, RUN_ID), PREFERENCE, sample=None, seed=3, systems=[SYSTEMS[0]])


def test_label_skip_undo_and_resume_after_a_restart(store):
    client, queue = _client(store)
    assert client.get("/label", follow_redirects=False).headers["location"] == "/label/item/0"
    assert _label(client, 0, "1").headers["location"] == "/label/item/1"
    assert "1 of 10 labelled" in client.get("/label/item/1").text
    assert client.get("/label/next?after=1", follow_redirects=False).headers["location"] == "/label/item/2"  # skip
    assert _label(client, 2, "0").headers["location"] == "/label/item/3"
    undo = client.post("/label/undo", data={"csrf": _form(client.get("/label/item/3").text)["csrf"]})
    assert undo.url.path == "/label/item/2"  # back to the item whose label was undone
    assert [(x.sample_id, x.value) for x in store.labels(RUN_ID, annotator="ann")] == [(queue.items[0].sample_id, 1)]
    _label(client, 2, "1")
    _label(client, 3, "1")
    # a restart: a new app (new secret) over the same store resumes after the item labelled last, item 3
    again, queue_again = _client(store)
    assert queue_again.items == queue.items
    assert again.get("/label", follow_redirects=False).headers["location"] == "/label/item/4"
    for index in range(4, 10):
        _label(again, index, "0")
    assert again.get("/label", follow_redirects=False).headers["location"] == "/label/item/1"  # the skipped one
    assert _label(again, 1, "1").headers["location"] == "/label/done"
    assert "Every item of the queue is labelled" in again.get("/label/done").text
    assert len(store.labels(RUN_ID, annotator="ann")) == 10
    # a second annotator gets the same items and labels them independently
    other, other_queue = _client(store, annotator="bob")
    assert other_queue.items == queue.items
    assert other.get("/label", follow_redirects=False).headers["location"] == "/label/item/0"


def test_a_post_needs_this_sessions_csrf_token(store):
    client, _ = _client(store)
    form = _form(client.get("/label/item/0").text)
    no_token = client.post("/label/item/0", data={"item": form["item"], "value": "1"})
    assert no_token.status_code == 403 and "CSRF" in no_token.text
    forged = client.post("/label/item/0", data={**form, "csrf": form["csrf"][:-2] + "xx", "value": "1"})
    assert forged.status_code == 403
    stranger, _ = _client(store)  # another browser: its own session cookie, so the token above is not its own
    stranger.get("/label/item/0")
    assert stranger.post("/label/item/0", data={**form, "value": "1"}).status_code == 403
    assert client.post("/label/undo", data={}).status_code == 403
    assert store.labels(RUN_ID) == []


def test_a_label_reaches_only_the_item_of_its_queue_on_its_run(store):
    write_label_run(store, OTHER_RUN_ID, samples=24)
    client, queue = _client(store)
    other, other_queue = _client(store, run_id=OTHER_RUN_ID)
    mine = _form(client.get("/label/item/0").text)
    theirs = _form(other.get("/label/item/0").text)
    assert client.post("/label/item/0", data={**mine, "item": theirs["item"], "value": "1"}).status_code == 409
    assert client.post("/label/item/1", data={**mine, "value": "1"}).status_code == 409  # item 0's id at item 1
    assert client.post("/label/item/99", data={**mine, "value": "1"}).status_code == 404
    assert client.post("/label/item/0", data={**mine, "value": "0.5"}).status_code == 400
    assert store.labels(RUN_ID) == [] and store.labels(OTHER_RUN_ID) == []
    assert client.post("/label/item/0", data={**mine, "value": "1"}).status_code == 200  # 303 -> next item
    assert [x.run_id for x in store.labels(RUN_ID)] == [RUN_ID] and store.labels(OTHER_RUN_ID) == []
