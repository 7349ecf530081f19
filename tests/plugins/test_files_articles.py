"""The files source's 'articles' layout (the boolean-agent paper's title/content/url/date/question records)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragassay.components import ComponentContext
from ragassay.errors import DatasetError
from ragassay.plugins.files import FilesSource

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "rag_dataset_gen"


def source(tmp_path, **options):
    return FilesSource(
        FilesSource.Options(layout="articles", **options), context=ComponentContext(project_dir=tmp_path)
    )


def test_article_becomes_reference_context_and_corpus(tmp_path):
    articles = [
        {
            "title": "Zürich floods",
            "content": "In 2024 the Sihl flooded.",
            "url": "https://w/zf",
            "date": "2024-01-02",
            "question": "Which river flooded?",
        },
        {
            "title": "O'Brien prize",
            "content": "The prize went to O'Brien.",
            "url": "https://w/ob",
            "date": "2023-05-06",
            "question": "Who won?",
        },
    ]
    rows = articles + [articles[0]]  # an exact repeat is kept once
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    src = source(tmp_path, path="a.jsonl")
    samples = list(src.samples())
    docs = list(src.documents())
    assert [s.question_id for s in samples] == ["https://w/zf", "https://w/ob"]
    assert samples[0].reference_contexts == ["In 2024 the Sihl flooded."]
    assert samples[0].metadata == {"title": "Zürich floods", "url": "https://w/zf", "date": "2024-01-02"}
    assert [d.id for d in docs] == [s.reference_context_ids[0] for s in samples]
    assert docs[1].title == "O'Brien prize" and docs[1].metadata["date"] == "2023-05-06"


def test_article_without_question_names_the_line(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"title": "T", "content": "c", "url": "u"}\n')
    with pytest.raises(DatasetError, match=r"a.jsonl, line 1: no question"):
        list(source(tmp_path, path="a.jsonl").samples())


def test_the_papers_article_set(tmp_path):
    if not (SHARED / "A_f.jsonl").exists():
        pytest.skip("../shared/data/rag_dataset_gen/A_f.jsonl is absent (a user's checkout has no ../shared)")
    src = FilesSource(
        FilesSource.Options(layout="articles", path="A_f.jsonl"), context=ComponentContext(project_dir=SHARED)
    )
    samples, docs = list(src.samples()), list(src.documents())
    assert len(samples) == len(docs) == len({s.question_id for s in samples})
    assert all(s.reference_context_ids[0] in {d.id for d in docs} for s in samples)
    assert all(s.metadata["date"] >= "2021-10" for s in samples)
