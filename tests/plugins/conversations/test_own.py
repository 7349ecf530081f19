"""The conversations_files source: the documented JSONL and CSV shapes, and one clear error per bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragassay.components import ComponentContext
from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.conversations.own import ConversationFilesSource

CONVERSATION = {
    "conversation_id": "c1",
    "topic": "companies",
    "turns": [
        {
            "speaker": "user",
            "text": "Who founded Acme?",
            "reference_answers": ["Ada Smith"],
            "reference_context_ids": ["acme.md"],
            "answerability": "answerable",
        },
        {"speaker": "agent", "text": "Ada Smith founded it in 1990."},
        {"speaker": "user", "text": "And when did she retire?", "answerability": "unanswerable", "kind": "follow-up"},
    ],
}
CSV = """conversation_id,turn,speaker,text,reference_answers,reference_context_ids,answerability
c1,1,user,Who founded Acme?,Ada Smith,acme.md,answerable
c1,1,agent,Ada Smith founded it in 1990.,,,
c2,1,user,What is tea?,"[""A drink"", ""A plant""]",tea.md;camellia.md,
c1,2,user,And when did she retire?,,,unanswerable
"""


def samples(tmp_path: Path, name: str, text: str):
    (tmp_path / name).write_text(text, encoding="utf-8")
    options = ConversationFilesSource.Options(path=name)
    return list(ConversationFilesSource(options, context=ComponentContext(project_dir=tmp_path)).samples())


def error(tmp_path: Path, name: str, text: str) -> str:
    with pytest.raises(DatasetError) as caught:
        samples(tmp_path, name, text)
    return str(caught.value)


def test_one_conversation_per_line(tmp_path):
    first, second = samples(tmp_path, "c.jsonl", json.dumps(CONVERSATION) + "\n")
    assert (first.question_id, first.turn, first.conversation_id, first.history) == ("c1::1", 1, "c1", [])
    assert first.reference_answers == ["Ada Smith"] and first.reference_context_ids == ["acme.md"]
    assert first.answerability == "answerable" and first.attributes == {"topic": "companies"}
    assert second.question_id == "c1::2" and second.question == "And when did she retire?"
    assert [(t.speaker, t.text) for t in second.history] == [
        ("user", "Who founded Acme?"),
        ("agent", "Ada Smith founded it in 1990."),
    ]
    assert second.answerability == "unanswerable" and second.is_answerable is False
    assert second.attributes == {"topic": "companies", "kind": "follow-up"}


def test_one_turn_per_csv_row_in_any_order(tmp_path):
    got = {s.question_id: s for s in samples(tmp_path, "c.csv", CSV)}
    assert list(got) == ["c1::1", "c1::2", "c2::1"]
    assert [t.text for t in got["c1::2"].history] == ["Who founded Acme?", "Ada Smith founded it in 1990."]
    assert got["c2::1"].reference_answers == ["A drink", "A plant"]
    assert got["c2::1"].reference_context_ids == ["tea.md", "camellia.md"] and got["c2::1"].answerability is None
    assert got["c1::2"].answerability == "unanswerable"


def test_the_same_rows_as_jsonl_give_the_same_samples(tmp_path):
    rows = [
        {"conversation_id": "c1", "turn": 2, "speaker": "user", "text": "And when did she retire?"},
        {"conversation_id": "c1", "turn": 1, "speaker": "agent", "text": "Ada Smith founded it in 1990."},
        {"conversation_id": "c1", "turn": 1, "speaker": "user", "text": "Who founded Acme?"},
    ]
    got = samples(tmp_path, "rows.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert [s.question_id for s in got] == ["c1::1", "c1::2"]
    assert [t.speaker for t in got[1].history] == ["user", "agent"]


@pytest.mark.parametrize(
    "name, text, expected",
    [
        (
            "c.csv",
            "conversation_id,turn,speaker,text\nc1,1,bot,hi\n",
            "line 2: field 'speaker' must be 'user' or 'agent'",
        ),
        ("c.csv", "conversation_id,speaker,text\nc1,user,hi\n", "line 1: the header lacks turn"),
        ("c.csv", "conversation_id,turn,speaker,text\nc1,1,user,hi\nc1,3,user,ho\n", "line 3: field 'turn'"),
        ("c.csv", "conversation_id,turn,speaker,text\nc1,x,user,hi\n", "line 2: field 'turn' must be a whole number"),
        ("c.csv", "conversation_id,turn,speaker,text\nc1,1,user,hi\nc1,1,user,ho\n", "two user rows for turn 1"),
        ("c.csv", "conversation_id,turn,speaker,text\nc1,1,agent,hi\n", "turn 1 has no user row"),
        (
            "c.csv",
            "conversation_id,turn,speaker,text,answerability\nc1,1,user,hi,maybe\n",
            "line 2: field 'answerability' must be one of",
        ),
        ("c.jsonl", '{"conversation_id": "c1", "turns": [{"speaker": "user"}]}\n', "field 'turns[0].text'"),
        ("c.jsonl", '{"turns": [{"speaker": "user", "text": "hi"}]}\n', "line 1: field 'conversation_id'"),
        (
            "c.jsonl",
            '{"conversation_id": "c", "turns": [{"speaker": "user", "text": "hi", "reference_answers": 3}]}\n',
            "field 'turns[0].reference_answers' must be a list of strings",
        ),
        (
            "c.jsonl",
            '{"conversation_id": "c", "turns": [{"speaker": "user", "text": "a"}, '
            '{"speaker": "agent", "text": "b", "answerability": "answerable"}]}\n',
            "field 'turns[1].answerability': an agent turn has only speaker and text",
        ),
        ("c.jsonl", '{"conversation_id": "c", "turns": []}\n', "line 1: field 'turns' must be a non-empty list"),
        ("c.jsonl", "{not json\n", "line 1:"),
        ("c.jsonl", "\n", "holds no conversation"),
        ("c.txt", "x", "unknown extension"),
    ],
)
def test_bad_input_is_one_error_naming_file_line_and_field(tmp_path, name, text, expected):
    message = error(tmp_path, name, text)
    assert expected in message and str(tmp_path / name) in message


def test_a_conversation_given_twice_and_mixed_shapes_are_errors(tmp_path):
    line = json.dumps(CONVERSATION) + "\n"
    assert "conversation 'c1' again (first on line 1)" in error(tmp_path, "c.jsonl", line + line)
    row = json.dumps({"conversation_id": "c2", "turn": 1, "speaker": "user", "text": "hi"}) + "\n"
    assert "line 2: the file mixes conversation lines" in error(tmp_path, "c.jsonl", line + row)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("dataset_source", "conversations_files")
    assert info.cls is ConversationFilesSource and info.plugin == "conversations_files"
