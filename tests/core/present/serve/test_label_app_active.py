"""Labels given in the labelling app carry what they judged and how their item was drawn: the digest of the answer
(or a pair's two answers) the page showed, and for an active queue the probability of the item (None in random
order), so estimates can weight them and later runs reuse them only on the same answers."""

from __future__ import annotations

import re

import pytest

from ragassay.labels import load_rubric
from ragassay.labels.queue import run_items
from ragassay.present.serve.label_app import LabelQueue, labelling_app
from ragassay.results import read_run

from labels_helpers import RUN_ID, open_label_store, with_stored_digest


@pytest.fixture
def store(tmp_path):
    store = open_label_store(tmp_path / "results.db")
    yield store
    store.close()


def _label_first(store, rubric, **queue_options):
    from starlette.testclient import TestClient

    items = run_items(read_run(store, RUN_ID), rubric, seed=2, **queue_options)
    queue = LabelQueue(store, RUN_ID, rubric, "ann", items)
    client = TestClient(labelling_app(queue, token=None), base_url="http://127.0.0.1")
    page = client.get("/label/item/0").text
    form = {name: re.search(rf'name="{name}" value="([^"]+)"', page).group(1) for name in ("csrf", "item")}
    value = f"{rubric.values[-1]:g}"
    assert client.post("/label/item/0", data={**form, "value": value}, follow_redirects=False).status_code == 303
    (stored,) = store.labels(RUN_ID, rubric.name)
    return queue.items[0], stored


@pytest.mark.parametrize("rubric", ["correct", "preference"])
def test_an_active_queues_label_stores_its_probability_and_the_digest_of_what_was_shown(store, rubric):
    item, stored = _label_first(store, load_rubric(rubric), sample=8, order="active")
    assert stored.sample_id == item.sample_id and 0 < item.probability < 1
    assert stored.probability == item.probability
    assert stored.output_digest == with_stored_digest(stored).output_digest is not None


def test_a_random_queues_label_has_no_probability_but_its_digest(store):
    _, stored = _label_first(store, load_rubric("correct"), sample=8)
    assert stored.probability is None and stored.output_digest == with_stored_digest(stored).output_digest
