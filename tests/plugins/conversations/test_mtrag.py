"""MTRAG's published files read as they are: generation tasks, conversations, retrieval tasks (tests/data/mtrag)."""

from __future__ import annotations

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from ragassay.components import ComponentContext
from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.conversations.mtrag import MtragConversationsSource, MtragRetrievalSource, MtragTasksSource

DATA = Path(__file__).resolve().parents[2] / "data" / "mtrag"
CID = "dd6b6ffd177f2b311abe676261279d2f"


def lines(path: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / path).read_text(encoding="utf-8").splitlines() if line.strip()]


def read(cls, root: Path = DATA, **options):
    context = ComponentContext(project_dir=root)
    source = cls(cls.Options(**options), context=context)
    return source, list(source.samples()), context.warnings


def test_the_sample_data_load_as_published():
    for name in ("responses-10.jsonl", "taskb_input.jsonl", "taskac_input.jsonl"):
        _, samples, warnings = read(MtragTasksSource, path=f"sample_data/{name}")
        records = lines(f"sample_data/{name}")
        assert warnings == [] and len(samples) == len(records) == 10
        for sample, record in zip(samples, records):
            assert sample.question_id == f"{record['conversation_id']}::{record['turn']}" == record["task_id"]
            assert sample.question == record["input"][-1]["text"]
            assert [(t.speaker, t.text) for t in sample.history] == [
                (t["speaker"], t["text"]) for t in record["input"][:-1]
            ]
            assert sample.turn == record["turn"] == 1 + sum(t.speaker == "user" for t in sample.history)
            assert sample.reference_context_ids == [c["document_id"] for c in record.get("contexts", [])]


def test_targets_answerability_and_enrichments():
    _, samples, _ = read(MtragTasksSource, path="sample_data/responses-10.jsonl")
    records = {r["task_id"]: r for r in lines("sample_data/responses-10.jsonl")}
    for sample in samples:
        record = records[sample.question_id]
        assert sample.reference_answers == [t["text"] for t in record["targets"]]
        assert sample.attributes["mtrag_answerability"] == record["answerability"][0]
        assert sample.attributes["question_type"] == record["Question Type"]
    first, second = samples[0], samples[1]
    assert (first.answerability, first.is_answerable, "multi_turn" in first.attributes) == (
        "unanswerable",
        False,
        False,
    )
    assert (second.answerability, second.attributes["multi_turn"]) == ("answerable", ["Clarification"])
    assert second.attributes["collection"] == "mt-rag-clapnq-elser-512-100-20240503"


def test_mtrag_un_labels_map_onto_answerability():
    _, samples, warnings = read(MtragTasksSource, path="mtragun/generation_tasks/reference.jsonl")
    assert warnings == []
    got = {s.attributes["mtrag_answerability"]: s.answerability for s in samples}
    assert got == {
        "ANSWERABLE": "answerable",
        "UNANSWERABLE": "unanswerable",
        "PARTIAL": "partial",
        "UNDERSPECIFIED": "underspecified",
    }
    for sample, record in zip(samples, lines("mtragun/generation_tasks/reference.jsonl")):
        assert sample.turn == int(record["turn"]) and sample.attributes["mtrag_task_id"] == record["task_id"]
        assert "<::>" in record["task_id"] and sample.question_id == record["task_id"].replace("<::>", "::")


def test_rag_contexts_are_not_references_when_told(tmp_path):
    _, samples, _ = read(MtragTasksSource, path="sample_data/taskb_input.jsonl", contexts="none")
    assert all(not s.reference_context_ids for s in samples)
    assert samples[1].attributes["mtrag_context_ids"] == [
        c["document_id"] for c in lines("sample_data/taskb_input.jsonl")[1]["contexts"]
    ]


def test_rows_that_cannot_be_read_are_skipped_with_one_warning(tmp_path):
    good = (DATA / "sample_data/responses-10.jsonl").read_text(encoding="utf-8").splitlines()
    broken = json.loads(good[2])
    broken["input"][-1]["speaker"] = "agent"
    unknown = json.loads(good[3])
    unknown["answerability"] = ["MAYBE"]
    text = "\n".join([good[0], "{oops", json.dumps(broken), json.dumps(unknown), good[1], good[0]]) + "\n"
    (tmp_path / "t.jsonl").write_text(text, encoding="utf-8")
    _, samples, warnings = read(MtragTasksSource, tmp_path, path="t.jsonl")
    assert [s.turn for s in samples] == [1, 2]
    assert len(warnings) == 1 and "4 row(s) could not be read and were skipped" in warnings[0]
    assert "line 2:" in warnings[0] and "line 3: 'input' must end with the user's turn" in warnings[0]
    assert "line 4: answerability ['MAYBE']" in warnings[0]
    (tmp_path / "bad.jsonl").write_text("[1]\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="no row could be read"):
        read(MtragTasksSource, tmp_path, path="bad.jsonl")


def test_conversations_file_one_sample_per_user_turn():
    _, samples, warnings = read(MtragConversationsSource, path="conversations/conversations.json")
    conversations = json.loads((DATA / "conversations/conversations.json").read_text(encoding="utf-8"))
    assert warnings == [] and len(samples) == sum(len(c["messages"]) // 2 for c in conversations) == 10
    tasks = {r["task_id"]: r for r in lines("sample_data/responses-10.jsonl")}
    first = conversations[0]
    cid = f"{first['author']}_{first['messages'][0]['timestamp']}"  # the published file has no conversation_id
    for sample in samples[:8]:
        task = tasks[f"{CID}::{sample.turn}"]
        assert sample.question_id == f"{cid}::{sample.turn}" and sample.conversation_id == cid
        assert sample.question == task["input"][-1]["text"]
        assert [t.text for t in sample.history] == [t["text"] for t in task["input"][:-1]]
        assert sample.reference_answers == [task["targets"][0]["text"]]
        assert sample.reference_context_ids == [c["document_id"] for c in task["contexts"]]
        assert sample.attributes["mtrag_answerability"] == task["answerability"][0]


def test_only_passages_judged_relevant_by_the_editor_else_the_author_are_references(tmp_path):
    conversations = json.loads((DATA / "conversations/conversations.json").read_text(encoding="utf-8"))
    conversation = conversations[0]
    contexts = conversation["messages"][3]["contexts"]
    author = conversation["author"]
    contexts[0]["feedback"]["relevant"][author]["value"] = "no"
    contexts[1]["feedback"]["relevant"]["an-editor"] = {"value": "no"}
    conversation["editor"] = "an-editor"
    (tmp_path / "c.json").write_text(json.dumps([conversation, {"messages": "nope"}]), encoding="utf-8")
    _, samples, warnings = read(MtragConversationsSource, tmp_path, path="c.json")
    assert samples[1].reference_context_ids == [c["document_id"] for c in contexts[2:]]
    assert len(warnings) == 1 and "conversation 2: conversation 2 has no 'messages' list" in warnings[0]


def qrels() -> dict[str, set[str]]:
    with (DATA / "retrieval_tasks/clapnq/qrels/dev.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    found: dict[str, set[str]] = {}
    for row in rows:
        found.setdefault(row["query-id"], set()).add(row["corpus-id"])
    return found


@pytest.mark.parametrize("queries", ["lastturn", "rewrite", "questions"])
def test_retrieval_tasks_with_each_query_file(queries):
    options = {"path": "retrieval_tasks/clapnq", "corpus": "corpora/passage_level/clapnq.jsonl.zip"}
    source, samples, warnings = read(MtragRetrievalSource, queries=queries, **options)
    rows = lines(f"retrieval_tasks/clapnq/clapnq_{queries}.jsonl")
    judged = qrels()
    assert warnings == [] and [s.attributes["mtrag_task_id"] for s in samples] == [r["_id"] for r in rows]
    for sample, row in zip(samples, rows):
        assert sample.question == row["text"] and sample.conversation_id == CID
        assert sample.question_id == f"{CID}::{sample.turn}" and row["_id"] == f"{CID}<::>{sample.turn}"
        assert set(sample.reference_context_ids) == judged[row["_id"]]
        assert [t.speaker for t in sample.history] == ["user"] * (sample.turn - 1)
    assert samples[1].history[0].text == "where do the arizona cardinals play this week"
    documents = list(source.documents())
    assert len(documents) == 57 and {d for ids in judged.values() for d in ids} <= {d.id for d in documents}


def test_speaker_tags_stripped_when_asked():
    options = {"path": "retrieval_tasks/clapnq", "corpus": "corpora/passage_level/clapnq.jsonl.zip"}
    _, samples, _ = read(MtragRetrievalSource, queries="questions", strip_speaker_tags=True, **options)
    assert (
        samples[0].question
        == "where do the arizona cardinals play this week\nDo the Arizona Cardinals play outside the US?"
    )


def test_retrieval_errors_and_warnings(tmp_path):
    root = tmp_path / "clapnq"
    shutil.copytree(DATA / "retrieval_tasks/clapnq", root)
    with (root / "clapnq_lastturn.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"_id": f"{CID}<::>9", "text": "|user|: and then?"}) + "\n")
    options = {"path": "clapnq", "corpus": "corpus.jsonl.zip"}
    _, samples, warnings = read(MtragRetrievalSource, tmp_path, **options)
    assert len(samples) == 7 and "1 queries have no judgement" in warnings[0]
    (root / "clapnq_rewrite.jsonl").write_text('{"_id": "q1", "text": "x"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="not MTRAG's '<conversation><::><turn>'"):
        read(MtragRetrievalSource, tmp_path, queries="rewrite", **options)
    (tmp_path / "corpus.jsonl.zip").write_bytes(b"not a zip")
    source = MtragRetrievalSource(
        MtragRetrievalSource.Options(**options), context=ComponentContext(project_dir=tmp_path)
    )
    with pytest.raises(DatasetError, match="not a zip archive"):
        list(source.documents())
    with zipfile.ZipFile(tmp_path / "corpus.jsonl.zip", "w") as archive:
        archive.writestr("a.jsonl", '{"_id": "p1", "text": "t"}\n')
        archive.writestr("b.jsonl", '{"_id": "p2", "text": "t"}\n')
    with pytest.raises(DatasetError, match="expected one .jsonl member"):
        list(source.documents())


@pytest.mark.parametrize("name", ["mtrag_tasks", "mtrag_conversations", "mtrag_retrieval"])
def test_registered_through_entry_point(name):
    info = load_plugins().registry.get("dataset_source", name)
    assert info.plugin == "conversations_mtrag"
