"""A long ``labels import`` (thousands of labels into one SQLite file) never holds the file for its whole length:
its checks are reads and its rows go in with one short switch, so a label given meanwhile by another writer (the
labelling app, another process's store) is stored at once, and the import still adds everything or nothing.

The import is paused in its middle (after it has checked, and in the old code written, a few labels) and the
other writer goes while it waits: no timing, the pause is an event."""

from __future__ import annotations

import pytest
from contention import PauseAt, in_thread

from ragassay.errors import StoreError
from ragassay.labels import Label
from ragassay.store import open_store, store_url

from labels_helpers import RUN_ID, SYSTEMS, write_label_run

LABELS = 3_000  # 1,500 samples x 2 systems: several chunks of checks


def _label(sample: int, system: str, annotator: str = "importer", value: float = 1.0) -> Label:
    return Label(
        run_id=RUN_ID,
        sample_id=f"q{sample:02d}",
        system=system,
        rubric="correct",
        rubric_version=1,
        annotator=annotator,
        value=value,
        labelled_at=1_000.0 + sample,
    )


@pytest.fixture
def stores(tmp_path):
    """The importer's store and another writer's (retries off: it must not need them), on one file."""
    url = store_url(str(tmp_path / "results.db"), tmp_path)
    importer = open_store(url)
    write_label_run(importer, RUN_ID, samples=LABELS // 2)
    other = open_store(url, retry_s=0)
    yield importer, other
    other.close()
    importer.close()


def test_a_label_given_during_a_long_import_is_stored_at_once_and_the_import_completes(stores):
    importer, other = stores
    labels = [_label(i, system) for i in range(LABELS // 2) for system in SYSTEMS]
    reads_of_labels = lambda sql: sql.lstrip().upper().startswith("SELECT") and "FROM labels" in sql  # noqa: E731
    with PauseAt(importer.engine, reads_of_labels, count=4) as pause:
        thread, outcome = in_thread(lambda: importer.add_labels(labels))
        assert pause.paused.wait(300), f"the import never reached its middle: {outcome}"
        given = _label(7, SYSTEMS[1], annotator="labeller", value=0.0)
        other.add_label(given)  # while the import waits in its middle: stored now, or "database is locked"
        assert [x.annotator for x in other.labels(RUN_ID, annotator="labeller")] == ["labeller"]
        pause.go()
        thread.join(300)
    assert outcome == {"result": LABELS}
    assert len(other.labels(RUN_ID, annotator="importer")) == LABELS
    assert importer.add_labels(labels) == 0  # imported again: nothing new


def test_an_import_stays_all_or_nothing_while_another_writer_stores_labels(stores):
    importer, other = stores
    labels = [_label(i, SYSTEMS[0]) for i in range(LABELS // 2)] + [_label(0, "ghost-system")]
    reads_of_labels = lambda sql: sql.lstrip().upper().startswith("SELECT") and "FROM labels" in sql  # noqa: E731
    with PauseAt(importer.engine, reads_of_labels, count=2) as pause:
        thread, outcome = in_thread(lambda: importer.add_labels(labels, [f"f.jsonl:{n}" for n in range(1, 1502)]))
        assert pause.paused.wait(300)
        other.add_label(_label(3, SYSTEMS[0], annotator="labeller"))
        pause.go()
        thread.join(300)
    assert isinstance(outcome.get("error"), StoreError) and "f.jsonl:1501" in str(outcome["error"])
    assert other.labels(RUN_ID, annotator="importer") == []  # nothing of the bad import
    assert len(other.labels(RUN_ID, annotator="labeller")) == 1  # the other writer's label stays
