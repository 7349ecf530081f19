"""The files dataset source: JSONL and CSV samples, corpus documents, and every error with its line."""

from __future__ import annotations

import json
from pathlib import Path

import pydantic
import pytest

from ragassay.components import ComponentContext
from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.files import FilesSource, read_documents

SHARED_AF = Path(__file__).resolve().parents[3] / "shared" / "data" / "rag_dataset_gen" / "A_f.jsonl"


def source(tmp_path: Path, path: str, **options) -> FilesSource:
    return FilesSource(FilesSource.Options(path=path, **options), context=ComponentContext(project_dir=tmp_path))


def write(tmp_path: Path, name: str, text: str) -> Path:
    file = tmp_path / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in records)


def test_registered_through_entry_point():
    info = load_plugins().registry.get("dataset_source", "files")
    assert info.plugin == "files"
    assert info.cls is FilesSource


# -- samples: JSONL ------------------------------------------------------------------------------------


def test_jsonl_samples(tmp_path):
    write(
        tmp_path,
        "data/qa.jsonl",
        jsonl(
            {
                "question_id": "a1",
                "question": "Where does O'Brien live?",
                "reference_answers": ["Zürich"],
                "reference_context_ids": ["people.md"],
                "template": "t3",
                "length": "short",
            },
            "",
            {
                "question": "Is the lake in Zürich?",
                "reference_answers": "yes",
                "is_answerable": False,
                "group_id": "g1",
            },
            {"question_id": 7, "question": "How many?", "reference_answers": [3]},
        ),
    )
    samples = list(source(tmp_path, "data/qa.jsonl").samples())
    assert [s.question_id for s in samples] == ["a1", "q3", "7"]  # blank line 2 counts as a line
    first, second, third = samples
    assert first.question == "Where does O'Brien live?" and first.reference_answers == ["Zürich"]
    assert first.reference_context_ids == ["people.md"]
    assert first.attributes == {"template": "t3", "length": "short"}
    assert second.reference_answers == ["yes"] and second.is_answerable is False and second.group_id == "g1"
    assert third.reference_answers == ["3"]


def test_jsonl_string_answer_starting_with_bracket_is_kept(tmp_path):
    write(tmp_path, "qa.jsonl", jsonl({"question": "Q?", "reference_answers": "[citation needed]"}))
    assert next(source(tmp_path, "qa.jsonl").samples()).reference_answers == ["[citation needed]"]


def test_custom_question_and_id_fields(tmp_path):
    write(tmp_path, "qa.jsonl", jsonl({"qid": "x", "query": "What is Zürich?"}, {"query": "And Bern?"}))
    samples = list(source(tmp_path, "qa.jsonl", question_field="query", id_field="qid").samples())
    assert [(s.question_id, s.question) for s in samples] == [("x", "What is Zürich?"), ("q2", "And Bern?")]


def test_absolute_path_is_kept(tmp_path):
    file = write(tmp_path, "elsewhere/qa.jsonl", jsonl({"question": "Q?"}))
    other = tmp_path / "project"
    other.mkdir()
    assert [s.question_id for s in source(other, str(file)).samples()] == ["q1"]


@pytest.mark.skipif(not SHARED_AF.exists(), reason="../shared/data is absent (a user checkout has no ../shared)")
def test_boolean_agent_paper_samples():
    samples = list(FilesSource(FilesSource.Options(path=str(SHARED_AF))).samples())
    assert len(samples) == 256
    assert samples[0].question_id == "q1" and "Hayley Kiyoko" in samples[0].question
    assert set(samples[0].attributes) == {"title", "content", "url", "date"}


# -- samples: CSV --------------------------------------------------------------------------------------


def test_csv_samples(tmp_path):
    write(
        tmp_path,
        "qa.csv",
        (
            "question_id,question,reference_answers,reference_context_ids,is_answerable,topic\n"
            'c1,Where does O\'Brien live?,"[""Zürich"", ""Zurich""]",people.md,true,people\n'
            "\n"
            ',"Is it\nmulti-line?",yes,,FALSE,\n'
            'c3,Plain?,,"[]",,geo\n'
        ),
    )
    samples = list(source(tmp_path, "qa.csv").samples())
    assert [s.question_id for s in samples] == ["c1", "q4", "c3"]
    first, second, third = samples
    assert first.question == "Where does O'Brien live?"
    assert first.reference_answers == ["Zürich", "Zurich"] and first.reference_context_ids == ["people.md"]
    assert first.is_answerable is True and first.attributes == {"topic": "people"}
    assert second.question == "Is it\nmulti-line?" and second.reference_answers == ["yes"]
    assert second.is_answerable is False and second.attributes == {}
    assert third.reference_answers == [] and third.reference_context_ids == [] and third.is_answerable is True


def test_csv_with_byte_order_mark(tmp_path):
    (tmp_path / "qa.csv").write_bytes("\ufeffquestion\nWhat is Zürich?\n".encode("utf-8"))
    assert next(source(tmp_path, "qa.csv").samples()).question == "What is Zürich?"


# -- samples: errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("qa.jsonl", jsonl({"question": "ok"}, '{"question": "broken"'), r"qa\.jsonl, line 2: invalid JSON"),
        (
            "qa.jsonl",
            jsonl({"question": "ok"}, {"question": "ok"}, "[1, 2]"),
            r"qa\.jsonl, line 3: expected a JSON object",
        ),
        (
            "qa.jsonl",
            jsonl({"question": "ok"}, {"answer": "no question"}),
            r"qa\.jsonl, line 2: no question.*'question'",
        ),
        ("qa.jsonl", jsonl({"question": "   "}), r"qa\.jsonl, line 1: no question"),
        (
            "qa.jsonl",
            jsonl({"question_id": "a", "question": "x"}, {"question_id": "a", "question": "y"}),
            r"qa\.jsonl, line 2: duplicate question_id 'a' \(first on line 1\)",
        ),
        (
            "qa.jsonl",
            jsonl({"question": "x", "reference_answers": {"a": 1}}),
            r"qa\.jsonl, line 1: 'reference_answers'",
        ),
        (
            "qa.jsonl",
            jsonl({"question": "x", "is_answerable": "maybe"}),
            r"qa\.jsonl, line 1: invalid sample.*is_answerable",
        ),
        (
            "qa.csv",
            "question,is_answerable\nok,true\nbad,perhaps\n",
            r"qa\.csv, line 3: is_answerable must be true or false",
        ),
        (
            "qa.csv",
            'question,reference_answers\nok,"[""unclosed"\n',
            r"qa\.csv, line 2: 'reference_answers' is not a valid JSON",
        ),
        (
            "qa.csv",
            "question,topic\nok,geo\nbad,geo,extra\n",
            r"qa\.csv, line 3: the row has 3 cells but the header has 2 columns \(question, topic\); quote cells",
        ),
        (  # a short row would silently lose its last columns (here the reference ids)
            "qa.csv",
            "question,reference_answers,reference_context_ids\nQ1?,a,doc1\nQ2?,b\n",
            r"qa\.csv, line 3: the row has 2 cells but the header has 3 columns "
            r"\(question, reference_answers, reference_context_ids\); give every column a cell",
        ),
        (
            "qa.csv",
            "question_id,question\nq1,ok\n,second gets q3\nq3,dup\n",
            r"qa\.csv, line 4: duplicate question_id 'q3'",
        ),
        ("qa.txt", "question\n", r"qa\.txt: unknown samples file extension '\.txt'; use \.jsonl or \.csv"),
    ],
)
def test_sample_errors_name_file_and_line(tmp_path, name, text, message):
    write(tmp_path, name, text)
    with pytest.raises(DatasetError, match=message):
        list(source(tmp_path, name).samples())


def test_missing_samples_file(tmp_path):
    with pytest.raises(DatasetError, match=r"samples file not found: .*missing\.jsonl.*'path'"):
        list(source(tmp_path, "missing.jsonl").samples())


def test_not_utf8(tmp_path):
    (tmp_path / "qa.jsonl").write_bytes(b'{"question": "caf\xe9"}\n')
    with pytest.raises(DatasetError, match="not UTF-8"):
        list(source(tmp_path, "qa.jsonl").samples())


def test_samples_need_a_path(tmp_path):
    options = FilesSource.Options(documents=["*.txt"])
    documents_only = FilesSource(options, context=ComponentContext(project_dir=tmp_path))
    with pytest.raises(DatasetError, match="no 'path' option"):
        list(documents_only.samples())


def test_unknown_option_is_rejected():
    with pytest.raises(pydantic.ValidationError):
        FilesSource.Options(path="qa.jsonl", glob="*.md")


# -- documents ------------------------------------------------------------------------------------------


def test_text_and_markdown_documents(tmp_path):
    write(tmp_path, "docs/people.md", "Intro line\n\n# O'Brien in Zürich\n\nSean O'Brien lives in Zürich.\n")
    write(tmp_path, "docs/sub/notes.txt", "No heading here.\n")
    docs = list(source(tmp_path, "qa.jsonl", documents=["docs/**/*.md", "docs/**/*.txt"]).documents())
    assert [(d.id, d.title) for d in docs] == [
        ("docs/people.md", "O'Brien in Zürich"),
        ("docs/sub/notes.txt", "notes"),
    ]
    assert docs[0].text == "Intro line\n\n# O'Brien in Zürich\n\nSean O'Brien lives in Zürich.\n"
    assert docs[1].metadata == {"source": "docs/sub/notes.txt"}


def test_json_documents_and_paper_layout(tmp_path):
    write(
        tmp_path,
        "corpus/wiki.jsonl",
        jsonl(
            {"title": "Zürich", "content": "Zürich is a city.", "url": "https://w/Zürich", "date": "2022-01-01"},
            {"title": "Zürich", "content": "Zürich is a city.", "url": "https://w/Zürich", "date": "2022-01-01"},
            {"title": "Only a title", "content": "Text."},
        ),
    )
    write(tmp_path, "corpus/extra.json", json.dumps([{"id": 5, "text": "Bern.", "title": "Bern", "lang": "de"}]))
    docs = list(read_documents(["corpus/*"], ComponentContext(project_dir=tmp_path)))
    assert [d.id for d in docs] == ["5", "https://w/Zürich", "Only a title"]  # exact repeat skipped
    bern, zurich, titled = docs
    assert (bern.title, bern.text, bern.metadata) == ("Bern", "Bern.", {"lang": "de", "source": "corpus/extra.json"})
    assert zurich.title == "Zürich" and zurich.text == "Zürich is a city."
    assert zurich.metadata == {"url": "https://w/Zürich", "date": "2022-01-01", "source": "corpus/wiki.jsonl"}
    assert titled.text == "Text."


def test_beir_corpus_ids_come_from_underscore_id(tmp_path):
    write(
        tmp_path,
        "corpus.jsonl",
        jsonl(
            {
                "_id": "4983",
                "title": "Microstructural development",
                "text": "Alterations of the brain.",
                "metadata": {},
            },
            {"_id": 17, "title": "", "text": "Untitled."},
            {"id": "own", "_id": "beir", "text": "Both keys."},
        ),
    )
    docs = list(read_documents(["corpus.jsonl"], ComponentContext(project_dir=tmp_path)))
    assert [(d.id, d.title) for d in docs] == [("4983", "Microstructural development"), ("17", ""), ("own", "")]
    assert docs[2].metadata == {"_id": "beir", "source": "corpus.jsonl"}  # 'id' wins; '_id' kept


def test_each_file_read_once(tmp_path):
    write(tmp_path, "a.txt", "A")
    docs = list(read_documents(["*.txt", "a.txt"], ComponentContext(project_dir=tmp_path)))
    assert [d.id for d in docs] == ["a.txt"]


@pytest.mark.parametrize(
    "name, text, message",
    [
        (
            "c.jsonl",
            jsonl({"id": "a", "text": "x"}, {"id": "b"}),
            r"c\.jsonl, line 2: the record needs a string 'text'",
        ),
        ("c.jsonl", jsonl({"id": "a", "text": "x"}, "{oops"), r"c\.jsonl, line 2: invalid JSON"),
        ("c.jsonl", jsonl({"text": "anonymous"}), r"c\.jsonl, line 1: the record has no 'id', '_id', 'url' or 'title'"),
        (
            "c.jsonl",
            jsonl({"id": "a", "text": "x"}, {"id": "a", "text": "y"}),
            r"c\.jsonl, line 2: duplicate document id 'a'",
        ),
        ("c.json", '[{"id": "a", "text": "x"}, 3]', r"c\.json, item 2: expected a JSON object"),
        ("c.pdf", "%PDF", r"c\.pdf: unsupported document file type '\.pdf'"),
    ],
)
def test_document_errors(tmp_path, name, text, message):
    write(tmp_path, name, text)
    with pytest.raises(DatasetError, match=message):
        list(read_documents([name], ComponentContext(project_dir=tmp_path)))


def test_pattern_matching_nothing_is_a_warning_when_others_matched(tmp_path):
    write(tmp_path, "docs/a.md", "# A\n")
    files = source(tmp_path, "qa.jsonl", documents=["docs/*.md", "docs/*.txt"])
    assert [d.id for d in files.documents()] == ["docs/a.md"]
    assert len(files.context.warnings) == 1
    assert "document pattern 'docs/*.txt' matches no file" in files.context.warnings[0]


def test_no_pattern_matching_anything_is_an_error_naming_patterns_and_folder(tmp_path):
    (tmp_path / "corpus").mkdir()
    files = source(tmp_path, "qa.jsonl", documents=["corpus/**/*.md", "corpus/**/*.txt"])
    with pytest.raises(DatasetError) as caught:
        list(files.documents())
    message = str(caught.value)
    assert "'corpus/**/*.md', 'corpus/**/*.txt' match no file" in message and str(tmp_path) in message


def test_common_text_formats_are_documents(tmp_path):
    for name in ("a.txt", "b.text", "c.md", "d.markdown", "e.rst"):
        write(tmp_path, f"corpus/{name}", f"Text of {name}.\n")
    docs = list(read_documents(["corpus/*"], ComponentContext(project_dir=tmp_path)))
    assert [d.id for d in docs] == ["corpus/a.txt", "corpus/b.text", "corpus/c.md", "corpus/d.markdown", "corpus/e.rst"]
    assert docs[4].text == "Text of e.rst.\n" and docs[4].title == "e"


def test_unsupported_files_matched_by_a_wildcard_are_skipped_with_one_counted_warning(tmp_path):
    write(tmp_path, "corpus/a.md", "# A\n")
    write(tmp_path, "corpus/scan.pdf", "%PDF")
    write(tmp_path, "corpus/sub/logo.png", "PNG")
    context = ComponentContext(project_dir=tmp_path)
    assert [d.id for d in read_documents(["corpus/**/*"], context)] == ["corpus/a.md"]
    assert context.warnings == [
        (
            "2 file(s) matched by the document patterns were skipped: unsupported type "
            "(.pdf, .png); documents are read from .txt, .text, .md, .markdown, .rst, .json "
            "or .jsonl"
        )
    ]


def test_only_unsupported_files_matched_is_an_error(tmp_path):
    write(tmp_path, "corpus/scan.pdf", "%PDF")
    with pytest.raises(DatasetError, match=r"match only files of unsupported types \(1 file\(s\), e\.g\. scan\.pdf\)"):
        list(read_documents(["corpus/*"], ComponentContext(project_dir=tmp_path)))


def test_no_patterns_no_documents(tmp_path):
    assert list(read_documents([], ComponentContext(project_dir=tmp_path))) == []


@pytest.mark.parametrize(
    "cell, expected",
    [
        ("a.md;b.md", ["a.md", "b.md"]),
        (" a.md ; b.md ;", ["a.md", "b.md"]),
        ('"[""a.md"", ""b;c.md""]"', ["a.md", "b;c.md"]),
        ("a.md", ["a.md"]),
    ],
)
def test_csv_list_fields_accept_semicolons_and_json_arrays(tmp_path, cell, expected):
    header = "question,reference_context_ids,reference_answers,reference_contexts"
    write(tmp_path, "qa.csv", f"{header}\nQ?,{cell},{cell},{cell}\n")
    sample = next(source(tmp_path, "qa.csv").samples())
    assert sample.reference_context_ids == expected
    assert sample.reference_answers == expected and sample.reference_contexts == expected


def test_jsonl_string_with_semicolon_stays_one_value(tmp_path):
    write(tmp_path, "qa.jsonl", jsonl({"question": "Q?", "reference_answers": "Monday; Tuesday"}))
    assert next(source(tmp_path, "qa.jsonl").samples()).reference_answers == ["Monday; Tuesday"]
