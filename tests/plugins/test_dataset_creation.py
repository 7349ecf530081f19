"""generated_qa and cutoff sources, with the real openai client against a scripted local server."""

from __future__ import annotations

import json

import pytest

from ragassay.components import ComponentContext
from ragassay.errors import ConfigError
from ragassay.plugin_manager import get_plugin_host

from servers.openai_chat import OpenAIChatServer, Turn

pytest.importorskip("openai")

ARTICLES = [
    {
        "title": "Old fair",
        "content": "The 1998 county fair had a pig race.",
        "url": "u/old",
        "date": "2019-03-01",
        "question": "q",
    },
    {
        "title": "New bridge",
        "content": "In 2023 a bridge opened in Zürich.",
        "url": "u/new",
        "date": "2023-06-01",
        "question": "Where did a bridge open?",
    },
    {
        "title": "Retro film",
        "content": "A 1970s film got an article in 2022.",
        "url": "u/retro",
        "date": "2022-01-05",
        "question": "Which film?",
    },
    {"title": "Undated", "content": "No date here.", "url": "u/none", "question": "?"},
]


@pytest.fixture(scope="module")
def server():
    with OpenAIChatServer() as server:
        yield server


@pytest.fixture
def context(tmp_path, monkeypatch, server):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-creation")
    server.reset()
    (tmp_path / "articles.jsonl").write_text("".join(json.dumps(a) + "\n" for a in ARTICLES))
    return ComponentContext(registry=get_plugin_host().registry, project_dir=tmp_path, cache_dir=tmp_path / "cache")


def llm(server, **options):
    return {"name": "openai", "options": {"model": "gpt-4o-mini", "base_url": server.url + "/v1", **options}}


ARTICLE_SOURCE = {"name": "files", "options": {"path": "articles.jsonl", "layout": "articles"}}


def test_generated_questions_keep_their_source_and_are_cached(server, context):
    server.default = lambda request: Turn(text=f"Question {len(server.requests)}?")
    options = {"source": ARTICLE_SOURCE, "generator": llm(server), "questions_per_document": 2}
    source = context.build("dataset_source", {"name": "generated_qa", "options": options})
    samples = list(source.samples())
    assert len(samples) == 8 and server.calls == 8
    first = next(s for s in samples if s.question_id == "u/new#q1")
    assert first.reference_context_ids == ["u/new"] and first.reference_contexts == [
        "In 2023 a bridge opened in Zürich."
    ]
    prompts = [r.json["messages"][-1]["content"] for r in server.requests]
    assert "Generate a creative question about the contents of the following text: In 2023 a bridge" in " ".join(
        prompts
    )
    assert {r.json["temperature"] for r in server.requests} == {1.0}
    again = context.build("dataset_source", {"name": "generated_qa", "options": options})
    assert [s.question for s in again.samples()] == [s.question for s in samples]
    assert server.calls == 8  # every question came from the response cache (one entry per sample index)


def test_generated_questions_with_answers(server, context):
    server.default = lambda request: Turn(text=json.dumps({"question": "Where?", "answer": "Zürich"}))
    options = {"source": ARTICLE_SOURCE, "generator": llm(server, cache=False), "with_answers": True}
    samples = list(context.build("dataset_source", {"name": "generated_qa", "options": options}).samples())
    assert {s.reference_answers[0] for s in samples} == {"Zürich"} and len(samples) == 4


def test_cutoff_by_date_then_by_llm(server, context):
    cutoff = {"source": ARTICLE_SOURCE, "cutoff": "2021-09"}
    source = context.build("dataset_source", {"name": "cutoff", "options": cutoff})
    assert [d.id for d in source.documents()] == ["u/new", "u/retro"]  # old and undated are dropped
    assert [s.question_id for s in source.samples()] == ["u/new", "u/retro"]

    def judge(request):
        text = request.json["messages"][-1]["content"]
        return Turn(text=None, tool_calls=[("after_cutoff", {"after_cutoff": "bridge" in text})])

    server.default = judge
    filtered = context.build("dataset_source", {"name": "cutoff", "options": {**cutoff, "llm_filter": llm(server)}})
    assert [d.id for d in filtered.documents()] == ["u/new"]
    assert [s.question_id for s in filtered.samples()] == ["u/new"]
    forced = server.requests[0].json["tool_choice"]
    assert forced == {"type": "function", "function": {"name": "after_cutoff"}} and server.calls == 2


def test_a_generator_without_chat_is_refused(context):
    options = {"source": ARTICLE_SOURCE, "generator": "extractive"}
    with pytest.raises(
        ConfigError,
        match="generated_qa: generator 'extractive' does not support chat.*use an LLM "
        "generator instead: openai, anthropic or local",
    ):
        list(context.build("dataset_source", {"name": "generated_qa", "options": options}).samples())


def test_options_type_nested_references_for_plan_time_resolution():
    from ragassay import ChunkerRef, DatasetSourceRef, GeneratorRef
    from ragassay.plugins.dataset_creation import CutoffSource, GeneratedQASource

    qa = GeneratedQASource.Options(source=ARTICLE_SOURCE, generator="openai", chunker="recursive")
    assert (type(qa.source), type(qa.generator), type(qa.chunker)) == (DatasetSourceRef, GeneratorRef, ChunkerRef)
    cut = CutoffSource.Options(source=ARTICLE_SOURCE, cutoff="2024-01", llm_filter={"name": "anthropic"})
    assert type(cut.source) is DatasetSourceRef and type(cut.llm_filter) is GeneratorRef
