"""Store v6 -> v8 (through v7, reasoning tokens): ``labels`` gains ``output_digest`` and ``probability``; every
label a version-6 store holds stays as it was (undone ones too) and gets the digest of the answer(s) it was given
on, read from its run's outputs; a label whose answer is not stored keeps no digest. On SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import create_engine, inspect, text

from ragassay.labels.digest import answers_digest
from ragassay.models import RAGOutput
from ragassay.results import read_reusable_labels, read_run
from ragassay.store import SCHEMA_VERSION, open_store, store_url
from ragassay.store.migrations import migrate

ANSWERS = {("a", "q1"): "Paris.", ("b", "q1"): "It is Paris, in France.", ("a", "q2"): "Zürich", ("b", "q2"): "Bern"}
V6_COLUMNS = "id, run_id, sample_id, system, systems_json, item_key, rubric, rubric_version, annotator, value, " + (
    "labelled_at, undone_at"
)
LABELS = [  # v6 rows: (sample, system, systems_json, item_key, rubric, annotator, value, labelled_at, undone_at)
    ("q1", "a", None, '["q1", "a"]', "correct", "ann", 1.0, 10.0, None),
    ("q1", None, '["b", "a"]', '["q1", "a", "b"]', "preference", "ann", -1.0, 11.0, None),
    ("q2", "a", None, '["q2", "a"]', "correct", "ann", 0.0, 12.0, 13.0),  # undone: stays undone
    ("q3", "a", None, '["q3", "a"]', "correct", "bob", 1.0, 14.0, None),  # its output failed: no answer to digest
]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return store_url("results.db", tmp_path)
    return request.getfixturevalue("postgres_url")


def v6_database(url: str) -> list[tuple]:
    """A version-6 store as version 6 wrote it, with the labels above; returns its label rows."""
    engine = create_engine(url)
    with engine.begin() as conn:
        assert migrate(conn, 6) == [1, 2, 3, 4, 5, 6]
        conn.execute(
            text(
                "insert into runs (id, fingerprint, project, config_path, config_json, spec_json, ragassay_version, "
                "status, sample_count, created_at, updated_at) values ('r1', 'f', 'p', 'c', '{}', '{}', '0.1.0', "
                "'complete', 3, 1, 1)"
            )
        )
        conn.execute(text("insert into run_systems values ('r1', 'a', 0, '{}'), ('r1', 'b', 1, '{}')"))
        for position, qid in enumerate(("q1", "q2", "q3")):
            sample = json.dumps({"question_id": qid, "question": "?"})
            conn.execute(
                text("insert into run_samples values ('r1', :q, :p, :s)"), {"q": qid, "p": position, "s": sample}
            )
        rows = [
            {"s": s, "q": q, "status": "ok", "answer": answer, "raw": RAGOutput(answer=answer).model_dump_json()}
            for (s, q), answer in ANSWERS.items()
        ]
        rows.append({"s": "a", "q": "q3", "status": "failed", "answer": None, "raw": None})
        conn.execute(
            text(
                "insert into outputs (run_id, system, question_id, status, answer, output_json, created_at, "
                "input_tokens, output_tokens) values ('r1', :s, :q, :status, :answer, :raw, 1, 0, 0)"
            ),
            rows,
        )
        conn.execute(
            text(
                "insert into labels (run_id, sample_id, system, systems_json, item_key, rubric, rubric_version, "
                "annotator, value, labelled_at, undone_at) values ('r1', :q, :s, :pair, :key, :rubric, 1, :who, "
                ":value, :at, :undone)"
            ),
            [dict(zip(("q", "s", "pair", "key", "rubric", "who", "value", "at", "undone"), row)) for row in LABELS],
        )
        stored = conn.execute(text(f"select {V6_COLUMNS} from labels order by id")).all()
    engine.dispose()
    return [tuple(row) for row in stored]


def test_an_old_store_opens_with_its_labels_intact_and_each_given_the_digest_of_what_it_judged(url):
    before = v6_database(url)
    store = open_store(url, create=False)
    try:
        with store.engine.connect() as conn:
            assert conn.execute(text("select version from schema_version")).scalar() == SCHEMA_VERSION >= 8
            assert {"output_digest", "probability"} <= {c["name"] for c in inspect(conn).get_columns("labels")}
            after = [tuple(r) for r in conn.execute(text(f"select {V6_COLUMNS} from labels order by id"))]
            digests = [r for (r,) in conn.execute(text("select output_digest from labels order by id"))]
            assert conn.execute(text("select count(*) from labels where probability is not null")).scalar() == 0
        assert after == before  # nothing lost, nothing changed: values, times, the undone label
        assert digests == [
            answers_digest(["Paris."]),
            answers_digest(["Paris.", "It is Paris, in France."]),  # a pair: the answers in the systems' name order
            answers_digest(["Zürich"]),
            None,  # the failed output has no answer: this label can be reused on no other run
        ]
        counted = store.labels("r1")
        assert [(x.sample_id, x.rubric, x.value) for x in counted] == [
            ("q1", "correct", 1.0),
            ("q1", "preference", -1.0),
            ("q3", "correct", 1.0),
        ]
        assert [x.output_digest for x in counted] == [digests[0], digests[1], None]
        # the migrated labels count on their run where it has the answer; the failed output's label on nothing
        reuse = read_reusable_labels(store, read_run(store, "r1", payloads=True))
        assert [x.value for x in reuse.labels] == [1.0, -1.0] and reuse.unmatched == 1 and not reuse.stale
    finally:
        store.close()


def test_the_migration_runs_once_and_a_second_open_changes_nothing(url):
    v6_database(url)
    open_store(url, create=False).close()
    engine = create_engine(url)
    with engine.connect() as conn:
        first = conn.execute(text("select * from labels order by id")).all()
    engine.dispose()
    open_store(url, create=False).close()
    engine = create_engine(url)
    with engine.connect() as conn:
        assert conn.execute(text("select * from labels order by id")).all() == first
    engine.dispose()
