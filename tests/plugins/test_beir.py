"""The beir dataset source: the shipped BEIR sample, the MTEB, ir_datasets and TREC layouts, every error."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pydantic
import pytest

from ragassay.components import ComponentContext
from ragassay.errors import DatasetError
from ragassay.plugin_manager import load_plugins
from ragassay.plugins.beir import BeirSource

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "beir_sample"
CORPUS = [
    {"_id": "d1", "title": "Bees", "text": "Bees dance to show where flowers are."},
    {"_id": "d2", "title": "", "text": "Volcanoes erupt when gas pressure builds."},
    {"_id": "d3", "title": "Tea", "text": "Green tea turns bitter in boiling water."},
]
TOPICS = """<top>
<num> Number: 301
<title> bee dance
<desc> Description:
How do bees show where flowers are?
<narr> Narrative:
Documents on the waggle dance are relevant.
</top>
<top>
<num> Number: 302
<title> bitter tea
<desc> Description:
Why is tea bitter?
<narr> Narrative:
Brewing temperature.
</top>
"""


def jsonl(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def beir_folder(folder: Path, qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td3\t1\n", **extra) -> Path:
    queries = jsonl({"_id": "q1", "text": "how do bees dance"}, {"_id": "q2", "text": "bitter tea"})
    return write(folder, {"corpus.jsonl": jsonl(*CORPUS), "queries.jsonl": queries, "qrels/test.tsv": qrels, **extra})


def source(path: Path, **options) -> BeirSource:
    return BeirSource(BeirSource.Options(path=str(path), **options), context=ComponentContext(project_dir=path.parent))


def read(path: Path, **options) -> tuple[list, list[str]]:
    src = source(path, **options)
    return list(src.samples()), src.context.warnings


def test_registered_through_entry_point():
    info = load_plugins().registry.get("dataset_source", "beir")
    assert (info.plugin, info.cls) == ("beir", BeirSource)


def test_options_are_checked():
    with pytest.raises(pydantic.ValidationError):
        BeirSource.Options(path="x", splits="dev")
    with pytest.raises(pydantic.ValidationError):
        BeirSource.Options(path="x", layout="msmarco")
    with pytest.raises(pydantic.ValidationError, match="split .'dev'. and qrels_file .'q.txt'. are both set"):
        BeirSource.Options(path="x", split="dev", qrels_file="q.txt")


# -- the shipped sample ---------------------------------------------------------------------------------


def test_sample_samples_follow_beirs_convention():
    src = source(SAMPLE)
    samples = list(src.samples())
    assert src.files().layout == "beir"
    assert [s.question_id for s in samples] == ["q1", "q2", "q3", "q4", "q5", "q6", "q7", "q8"]  # q9: no qrels
    first = samples[0]
    assert first.question == "How do honeybees tell each other where the flowers are?"
    assert first.reference_context_ids == ["1001", "1002"]  # grade 2, then grade 1; grade 0 left out
    assert first.metadata == {"relevance": {"1001": 2, "1002": 1, "1003": 0}}
    assert len(src.context.warnings) == 1
    assert "1 of 9 queries have no judgement in test.tsv (e.g. 'q9'); skipped, as BEIR does" in src.context.warnings[0]


def test_sample_documents_stream_the_corpus():
    documents = list(source(SAMPLE).documents())
    assert len(documents) == 30 and documents[0].id == "1001" and documents[0].title == "The waggle dance"
    untitled = next(d for d in documents if d.id == "1006")
    assert untitled.title == "" and untitled.metadata == {"topic": "bees"}


def test_reading_twice_gives_the_same_samples():
    assert list(source(SAMPLE).samples()) == list(source(SAMPLE).samples())


# -- layouts --------------------------------------------------------------------------------------------


def test_mteb_layout(tmp_path):
    qrels = jsonl(
        {"query-id": "q1", "corpus-id": "d1", "score": 1.0}, {"query-id": "q2", "corpus-id": "d3", "score": 2}
    )
    folder = write(
        tmp_path / "mteb",
        {
            "corpus.jsonl": jsonl(*CORPUS),
            "queries.jsonl": jsonl({"_id": "q1", "text": "dance"}, {"_id": "q2", "text": "tea"}),
            "qrels/test.jsonl": qrels,
        },
    )
    samples, warnings = read(folder)
    assert source(folder).files().layout == "mteb" and not warnings
    assert [(s.question_id, s.reference_context_ids, s.metadata["relevance"]) for s in samples] == [
        ("q1", ["d1"], {"d1": 1}),
        ("q2", ["d3"], {"d3": 2}),
    ]


def test_ir_datasets_layout(tmp_path):
    docs = [{"doc_id": c["_id"], "text": c["text"], "title": c["title"]} for c in CORPUS]
    folder = write(
        tmp_path / "ird",
        {
            "docs.jsonl": jsonl(*docs),
            "queries.jsonl": jsonl({"query_id": "1", "text": "dance"}, {"query_id": "2", "text": "tea"}),
            "qrels.txt": "1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n",
        },
    )
    src = source(folder)
    assert src.files().layout == "ir_datasets"
    samples = list(src.samples())
    assert [(s.question_id, s.question, s.reference_context_ids) for s in samples] == [
        ("1", "dance", ["d1"]),
        ("2", "tea", ["d3"]),
    ]
    assert [d.id for d in src.documents()] == ["d1", "d2", "d3"]


def test_ir_datasets_jsonl_qrels(tmp_path):
    docs = jsonl(*({"doc_id": c["_id"], "text": c["text"]} for c in CORPUS))
    qrels = jsonl({"query_id": "1", "doc_id": "d2", "relevance": 1, "iteration": "0"})
    folder = write(
        tmp_path, {"docs.jsonl": docs, "queries.jsonl": jsonl({"query_id": "1", "text": "x"}), "qrels.jsonl": qrels}
    )
    samples, _ = read(folder)
    assert [s.reference_context_ids for s in samples] == [["d2"]]


@pytest.mark.parametrize(
    "field, expected",
    [
        (None, ["bee dance", "bitter tea"]),
        ("description", ["How do bees show where flowers are?", "Why is tea bitter?"]),
        ("narrative", ["Documents on the waggle dance are relevant.", "Brewing temperature."]),
    ],
)
def test_trec_layout(tmp_path, field, expected):
    docs = jsonl(*({"doc_id": c["_id"], "text": c["text"]} for c in CORPUS))
    folder = write(tmp_path, {"docs.jsonl": docs, "topics.txt": TOPICS, "qrels.txt": "301 0 d1 1\n302 0 d3 1\n"})
    src = source(folder, query_field=field)
    samples = list(src.samples())
    assert src.files().layout == "trec"
    assert [s.question for s in samples] == expected
    assert [s.question_id for s in samples] == ["301", "302"]
    assert "narrative" in samples[0].metadata or field == "narrative"


def test_trec_topics_need_a_topic_field(tmp_path):
    folder = write(tmp_path, {"corpus.jsonl": jsonl(*CORPUS), "topics.txt": TOPICS, "qrels.txt": "301 0 d1 1\n"})
    with pytest.raises(DatasetError, match="query_field must be one of title, description, narrative, not 'text'"):
        read(folder, query_field="text")


def test_split_picks_the_qrels_file(tmp_path):
    folder = beir_folder(tmp_path / "b", **{"qrels/dev.tsv": "query-id\tcorpus-id\tscore\nq2\td2\t1\n"})
    samples, _ = read(folder, split="dev")
    assert [(s.question_id, s.reference_context_ids) for s in samples] == [("q2", ["d2"])]


def test_file_overrides_and_gzip(tmp_path):
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "docs.jsonl.gz").write_bytes(gzip.compress(jsonl(*CORPUS).encode()))
    write(folder, {"my_queries.jsonl": jsonl({"_id": "q1", "question": "bees?"}), "judged.txt": "q1 0 d1 1\n"})
    samples, _ = read(
        folder,
        corpus_file="docs.jsonl.gz",
        queries_file="my_queries.jsonl",
        qrels_file="judged.txt",
        query_field="question",
    )
    assert [(s.question, s.reference_context_ids) for s in samples] == [("bees?", ["d1"])]


def test_gzipped_beir_corpus_is_found(tmp_path):
    folder = beir_folder(tmp_path / "b")
    corpus = folder / "corpus.jsonl"
    (folder / "corpus.jsonl.gz").write_bytes(gzip.compress(corpus.read_bytes()))
    corpus.unlink()
    assert [d.id for d in source(folder).documents()] == ["d1", "d2", "d3"]


def test_unrecognised_folder_says_what_was_looked_for(tmp_path):
    folder = write(tmp_path / "odd", {"corpus.jsonl": jsonl(*CORPUS), "qrels/dev.tsv": "x", "qrels/train.tsv": "x"})
    with pytest.raises(DatasetError) as info:
        read(folder)
    message = str(info.value)
    for looked in ("topics.txt (trec)", "docs.jsonl (ir_datasets)", "qrels/test.tsv (beir)", "qrels/test.jsonl (mteb)"):
        assert looked in message
    assert "the folder holds corpus.jsonl, qrels/" in message
    assert "qrels/ holds dev.tsv, train.tsv: set split to one of them" in message


def test_missing_folder(tmp_path):
    with pytest.raises(DatasetError, match="benchmark folder not found: .*nowhere; set the beir source's 'path'"):
        read(tmp_path / "nowhere")


def test_split_with_a_single_qrels_layout_is_an_error(tmp_path):
    folder = write(tmp_path, {"docs.jsonl": "{}", "queries.jsonl": "{}", "qrels.txt": ""})
    with pytest.raises(DatasetError, match="split = 'dev' applies to the beir and mteb layouts.*set qrels_file"):
        read(folder, split="dev")


def test_named_layout_with_a_missing_file(tmp_path):
    folder = beir_folder(tmp_path / "b")
    with pytest.raises(DatasetError, match=r"file not found: .*qrels/test.jsonl"):
        read(folder, layout="mteb")


# -- judgements that do not match ------------------------------------------------------------------------


def test_queries_without_qrels_are_one_warning(tmp_path):
    folder = beir_folder(tmp_path / "b", qrels="query-id\tcorpus-id\tscore\nq2\td3\t1\n")
    samples, warnings = read(folder)
    assert [s.question_id for s in samples] == ["q2"]
    assert len(warnings) == 1 and "1 of 2 queries have no judgement in test.tsv (e.g. 'q1')" in warnings[0]


def test_unknown_documents_warn_with_counts(tmp_path):
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\tgone\t1\nq2\tgone\t2\nq2\tlost\t0\n"
    samples, warnings = read(beir_folder(tmp_path / "b", qrels=qrels))
    assert [s.reference_context_ids for s in samples] == [["d1", "gone"], ["gone"]]  # kept, as BEIR keeps them
    assert len(warnings) == 1
    assert "3 judgement(s) name 2 document(s) missing from" in warnings[0] and "'gone', 'lost'" in warnings[0]


def test_no_judged_document_in_the_corpus_is_an_error(tmp_path):
    folder = beir_folder(tmp_path / "b", qrels="query-id\tcorpus-id\tscore\nq1\tx1\t1\nq2\tx2\t1\n")
    with pytest.raises(DatasetError, match=r"none of the 2 judged documents is in .*corpus.jsonl \(qrels: 'x1', 'x2'"):
        read(folder)


def test_unknown_queries_warn_and_none_known_is_an_error(tmp_path):
    qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq7\td2\t1\n"
    samples, warnings = read(beir_folder(tmp_path / "b", qrels=qrels))
    assert [s.question_id for s in samples] == ["q1"]
    assert any("1 judged query id(s) are not in" in w and "'q7'" in w for w in warnings)
    folder = beir_folder(tmp_path / "c", qrels="query-id\tcorpus-id\tscore\nq7\td1\t1\n")
    with pytest.raises(
        DatasetError, match=r"none of its 1 queries is in .*queries.jsonl \(qrels: 'q7'; queries: 'q1', 'q2'\)"
    ):
        read(folder)


def test_grades_zero_and_negative_are_judged_but_not_relevant(tmp_path):
    qrels = "query-id\tcorpus-id\tscore\nq1\td2\t0\nq1\td3\t-1\nq2\td1\t1\nq2\td2\t3\nq2\td3\t1\n"
    samples, warnings = read(beir_folder(tmp_path / "b", qrels=qrels))
    assert samples[0].reference_context_ids == [] and samples[0].metadata["relevance"] == {"d2": 0, "d3": -1}
    assert samples[1].reference_context_ids == ["d2", "d1", "d3"]  # grade descending, then id
    assert any("1 queries have judgements but no relevant document" in w and "'q1'" in w for w in warnings)


# -- duplicates -----------------------------------------------------------------------------------------


def test_duplicate_document_id_is_an_error(tmp_path):
    folder = beir_folder(tmp_path / "b")
    (folder / "corpus.jsonl").write_text(jsonl(*CORPUS, CORPUS[1]), encoding="utf-8")
    with pytest.raises(DatasetError, match=r"corpus.jsonl, line 4: duplicate document id 'd2' \(first on line 2\)"):
        list(source(folder).documents())


def test_duplicate_query_id_is_an_error(tmp_path):
    folder = beir_folder(tmp_path / "b")
    (folder / "queries.jsonl").write_text(jsonl({"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"}), "utf-8")
    with pytest.raises(DatasetError, match=r"queries.jsonl, line 2: duplicate query id 'q1' \(first on line 1\)"):
        read(folder)


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_empty_files_are_errors(tmp_path, name):
    folder = beir_folder(tmp_path / "b")
    (folder / name).write_text("\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=f"{name} is empty"):
        read(folder)


def test_the_sample_copied_elsewhere_reads_the_same(tmp_path):
    copy = shutil.copytree(SAMPLE, tmp_path / "copy")
    assert list(source(copy).samples()) == list(source(SAMPLE).samples())
