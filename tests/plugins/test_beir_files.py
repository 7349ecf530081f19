"""Readers of public benchmark files: JSONL corpora and queries, TREC topics, qrels in three formats."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from ragassay.errors import DatasetError
from ragassay.plugins.beir_files import corpus_documents, jsonl_queries, read_qrels_file, trec_topics

TOPICS = """<top>
<num> Number: 401
<title> foreign minorities, Germany

<desc> Description:
What language and cultural differences impede the integration
of foreign minorities in Germany?

<narr> Narrative:
A relevant document will focus on the causes of the lack of
integration in a significant way.
</top>

<top>
<num> Number: 402 </num>
<title> Topic: behavioral genetics </title>
<desc> Description:
What is happening in the field of behavioral genetics?
<narr> Narrative:
Reports on genetic influences on behaviour are relevant.
</top>
"""


def write(folder: Path, name: str, text: str) -> Path:
    file = folder / name
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


# -- corpus ---------------------------------------------------------------------------------------------


def test_corpus_ids_titles_and_metadata(tmp_path):
    file = write(
        tmp_path,
        "corpus.jsonl",
        jsonl(
            {"_id": "d1", "title": "T", "text": "one", "metadata": {"year": 2020}, "url": "u"},
            {"doc_id": 7, "text": "two", "title": None},
            "",
            {"id": "d3", "text": ""},
        ),
    )
    documents = list(corpus_documents(file))
    assert [(line, d.id, d.title, d.text) for line, d in documents] == [
        (1, "d1", "T", "one"),
        (2, "7", "", "two"),
        (4, "d3", "", ""),
    ]
    assert documents[0][1].metadata == {"year": 2020, "url": "u"}


def test_corpus_id_precedence_keeps_the_others_as_metadata(tmp_path):
    file = write(tmp_path, "c.jsonl", jsonl({"id": "x", "_id": "y", "text": "t"}))
    [(_, document)] = corpus_documents(file)
    assert (document.id, document.metadata) == ("y", {"id": "x"})


def test_corpus_gzip(tmp_path):
    file = tmp_path / "corpus.jsonl.gz"
    file.write_bytes(gzip.compress(jsonl({"_id": "a", "text": "gz"}).encode()))
    assert [d.text for _, d in corpus_documents(file)] == ["gz"]


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"_id": "a", "text": "x"}', "{not json"], "line 2: invalid JSON"),
        (['{"_id": "a", "text": "x"}', "[1, 2]"], "line 2: expected a JSON object, got list"),
        (['{"title": "no id", "text": "x"}'], "line 1: the record has no id: give it one of '_id', 'doc_id', 'id'"),
        (['{"_id": "", "text": "x"}'], "line 1: '_id' must be a non-empty string"),
        (['{"_id": "a", "title": "t"}'], "line 1: document 'a' needs a string 'text' field"),
        (['{"_id": "a", "text": 3}'], "line 1: document 'a' needs a string 'text' field"),
        (["", "  "], "is empty: it holds no JSON record"),
    ],
)
def test_corpus_errors_name_file_and_line(tmp_path, lines, message):
    file = write(tmp_path, "corpus.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="corpus.jsonl") as info:
        list(corpus_documents(file))
    assert message in str(info.value)


def test_missing_and_non_utf8_files(tmp_path):
    with pytest.raises(DatasetError, match="file not found: .*nothing.jsonl"):
        list(corpus_documents(tmp_path / "nothing.jsonl"))
    file = tmp_path / "latin1.jsonl"
    file.write_bytes('{"_id": "a", "text": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(DatasetError, match="not UTF-8 text"):
        list(corpus_documents(file))


def test_truncated_gzip_is_an_error(tmp_path):
    file = tmp_path / "corpus.jsonl.gz"
    file.write_bytes(gzip.compress(jsonl({"_id": "a", "text": "x" * 1000}).encode())[:30])
    with pytest.raises(DatasetError, match="cannot be read"):
        list(corpus_documents(file))


# -- queries --------------------------------------------------------------------------------------------


def test_jsonl_queries_field_and_extras(tmp_path):
    file = write(tmp_path, "q.jsonl", jsonl({"query_id": "1", "title": "short", "description": "long one"}))
    assert list(jsonl_queries(file, "description")) == [(1, "1", "long one", {"title": "short"})]
    with pytest.raises(DatasetError, match=r"line 1: query '1' has no text in 'text' .*set query_field"):
        list(jsonl_queries(file, "text"))


def test_trec_topics_each_field(tmp_path):
    file = write(tmp_path, "topics.txt", TOPICS)
    titles = list(trec_topics(file, "title"))
    assert [(line, number, text) for line, number, text, _ in titles] == [
        (1, "401", "foreign minorities, Germany"),
        (14, "402", "behavioral genetics"),
    ]
    assert titles[0][3] == {
        "description": "What language and cultural differences impede the integration of foreign minorities in Germany?",
        "narrative": "A relevant document will focus on the causes of the lack of integration in a significant way.",
    }
    described = [text for _, _, text, _ in trec_topics(file, "description")]
    assert described[1] == "What is happening in the field of behavioral genetics?"
    narrated = [text for _, _, text, extras in trec_topics(file, "narrative")]
    assert narrated[1] == "Reports on genetic influences on behaviour are relevant."


def test_trec_topic_errors(tmp_path):
    with pytest.raises(DatasetError, match="no TREC topic found"):
        list(trec_topics(write(tmp_path, "empty.txt", "just text\n"), "title"))
    no_number = write(tmp_path, "t1.txt", "\n\n<top>\n<title> x\n</top>\n")
    with pytest.raises(DatasetError, match=r"t1.txt, line 3: the topic has no <num>"):
        list(trec_topics(no_number, "title"))
    no_desc = write(tmp_path, "t2.txt", "<top>\n<num> Number: 5\n<title> x\n</top>\n")
    with pytest.raises(DatasetError, match=r"line 1: topic 5 has no <desc> text; choose another query_field"):
        list(trec_topics(no_desc, "description"))


# -- qrels ----------------------------------------------------------------------------------------------


def test_beir_tsv_qrels(tmp_path):
    file = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\n\nq2\td 3\t1\n")
    assert read_qrels_file(file) == {"q1": {"d1": 2, "d2": 0}, "q2": {"d 3": 1}}


def test_trec_qrels_with_negative_and_float_grades(tmp_path):
    file = write(tmp_path, "qrels.txt", "401 0 FBIS3-10082 1\n401 0 FT921-7107 -1\n402 Q0 LA0101 0.5\n")
    assert read_qrels_file(file) == {"401": {"FBIS3-10082": 1, "FT921-7107": -1}, "402": {"LA0101": 0.5}}


def test_jsonl_qrels_mteb_and_ir_datasets_keys(tmp_path):
    mteb = write(tmp_path, "test.jsonl", jsonl({"query-id": "q1", "corpus-id": "d1", "score": 1.0}))
    assert read_qrels_file(mteb) == {"q1": {"d1": 1}}
    assert isinstance(read_qrels_file(mteb)["q1"]["d1"], int)
    ird = write(tmp_path, "qrels.jsonl", jsonl({"query_id": "1", "doc_id": "a", "relevance": 2, "iteration": "0"}))
    assert read_qrels_file(ird) == {"1": {"a": 2}}


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("test.tsv", "query-id\tcorpus-id\tscore\n", "holds no judgement"),
        ("test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\n", "line 2: a BEIR qrels line has 3 tab-separated"),
        ("test.tsv", "q1\td1\t1\n", "line 1: a TREC qrels line has 4 fields .* starts with the header"),
        ("test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\thigh\n", "line 2: the relevance grade must be a number"),
        ("q.txt", "1 0 a 1\n2 0 b 1\n1 0 a 2\n", "line 3: query '1' judges document 'a' again \\(first on line 1\\)"),
        ("q.txt", "1 0 a nan\n", "line 1: the relevance grade must be a number"),
        ("q.jsonl", '{"qid": "1", "docid": "a", "rel": 1}\n', "line 1: a qrels record needs 'query-id'"),
        ("q.jsonl", '{"query-id": null, "corpus-id": "a", "score": 1}\n', "line 1: 'query-id' must be a non-empty"),
        ("q.jsonl", '{"query-id": "1", "corpus-id": "a", "score": true}\n', "line 1: the relevance grade must be"),
    ],
)
def test_qrels_errors(tmp_path, name, text, message):
    file = write(tmp_path, name, text)
    with pytest.raises(DatasetError, match=message) as info:
        read_qrels_file(file)
    assert name in str(info.value)
