"""http adapter against a real local server: templating, field mapping, retries, failures, env headers."""

from __future__ import annotations

import asyncio

import pytest

from ragassay.components import ComponentContext
from ragassay.models import Sample
from ragassay.reference_rags.adapters.http_adapter import HttpRAG, ResponseTooLarge, lookup

from servers.base import JSONServer, Reply

SAMPLE = Sample(question_id="q7", question="Who built the reactor?", team="red")


def make(url, **options):
    return HttpRAG(HttpRAG.Options(url=url, backoff_s=0.01, **options), context=ComponentContext())


async def ask(rag, sample=SAMPLE):
    try:
        return await rag.answer(sample)
    finally:
        await rag.aclose()


def test_template_mapping_and_headers(monkeypatch):
    monkeypatch.setenv("MY_RAG_TOKEN", "tok-123")

    def handler(request):
        assert request.headers["authorization"] == "Bearer tok-123"
        return Reply(
            200,
            {
                "data": {
                    "text": f"answer to {request.json['query']['q']}",
                    "docs": [{"id": "d1", "body": "the reactor"}, {"id": "d2", "body": "x"}],
                }
            },
        )

    with JSONServer({("POST", "/rag"): handler}) as server:
        rag = make(
            server.url + "/rag",
            headers={"Authorization": "Bearer ${MY_RAG_TOKEN}"},
            request={"query": {"q": "{question}", "id": "{question_id}", "team": "{sample.team}"}},
            response={
                "answer": "/data/text",
                "contexts": "data.docs",
                "context_text_field": "body",
                "context_id_field": "id",
            },
        )
        output = asyncio.run(ask(rag))
        sent = server.requests[0].json
    assert sent == {"query": {"q": "Who built the reactor?", "id": "q7", "team": "red"}}
    assert output.answer == "answer to Who built the reactor?"
    assert output.contexts == ["the reactor", "x"] and output.context_ids == ["d1", "d2"] and output.retrieved


def test_retries_on_5xx_and_429_then_succeeds():
    replies = iter([Reply(503, {}), Reply(429, {}), Reply(200, {"answer": "ok"})])
    with JSONServer({("POST", "/rag"): lambda r: next(replies)}) as server:
        output = asyncio.run(ask(make(server.url + "/rag", retries=3)))
        assert output.answer == "ok" and len(server.requests) == 3


def test_gives_up_after_retries_and_on_client_errors():
    with JSONServer({("POST", "/rag"): lambda r: Reply(500, {"error": "down"})}) as server:
        with pytest.raises(RuntimeError, match="HTTP 500"):
            asyncio.run(ask(make(server.url + "/rag", retries=2)))
        assert len(server.requests) == 3
    with JSONServer({("POST", "/rag"): lambda r: Reply(400, {"error": "bad"})}) as server:
        with pytest.raises(RuntimeError, match="HTTP 400"):
            asyncio.run(ask(make(server.url + "/rag", retries=5)))
        assert len(server.requests) == 1


def test_timeout_is_retried_then_fails():
    with JSONServer({("POST", "/rag"): lambda r: Reply(200, {"answer": "late"}, delay_s=0.5)}) as server:
        with pytest.raises(ConnectionError, match="after 2 attempts"):
            asyncio.run(ask(make(server.url + "/rag", retries=1, timeout_s=0.1)))


def test_missing_field_and_non_json():
    with JSONServer({("POST", "/rag"): lambda r: Reply(200, {"result": "x"})}) as server:
        with pytest.raises(KeyError, match="no 'answer'"):
            asyncio.run(ask(make(server.url + "/rag")))
    with JSONServer({("POST", "/rag"): lambda r: Reply(200, raw=b"<html>oops")}) as server:
        with pytest.raises(ValueError, match="non-JSON"):
            asyncio.run(ask(make(server.url + "/rag")))


def test_missing_env_var_is_named():
    with JSONServer({("POST", "/rag"): lambda r: Reply(200, {"answer": "x"})}) as server:
        with pytest.raises(RuntimeError, match="RAGASSAY_TEST_UNSET_VAR"):
            asyncio.run(ask(make(server.url + "/rag", headers={"X": "${RAGASSAY_TEST_UNSET_VAR}"})))


def test_lookup_paths():
    data = {"a": [{"b": 1}, {"b/c": 2}]}
    assert lookup(data, "a.0.b") == 1 and lookup(data, "/a/1/b~1c") == 2
    with pytest.raises(KeyError, match="no '5'"):
        lookup(data, "a.5")


# -- bounds: a whole-request deadline and a size limit enforced while reading ------------------------------------


def test_a_body_trickled_slowly_is_cut_off_at_the_request_deadline():
    """Each byte arrives well within timeout_s (a per-read timeout never fires); the whole body takes ~3 s."""
    body = b'{"answer": "' + b"x" * 48 + b'"}'
    trickle = Reply(200, chunks=[body[i : i + 1] for i in range(len(body))], chunk_delay_s=0.05)
    trickle.headers["Content-Type"] = "application/json"
    with JSONServer({("POST", "/rag"): lambda r: trickle}) as server:
        with pytest.raises(ConnectionError, match=r"no complete response within timeout_s = 0.5 s after 1 attempts"):
            asyncio.run(ask(make(server.url + "/rag", retries=0, timeout_s=0.5)))


def test_a_huge_body_is_abandoned_after_max_bytes_while_streaming():
    sent = {"bytes": 0}

    def huge():  # 64 MiB of a JSON string, produced lazily: counts what the server managed to hand over
        yield b'{"answer": "'
        for _ in range(1024):
            sent["bytes"] += 65536
            yield b"a" * 65536
        yield b'"}'

    with JSONServer({("POST", "/rag"): lambda r: Reply(200, chunks=huge())}) as server:
        with pytest.raises(ResponseTooLarge, match=r"sent more than 1,048,576 bytes, over max_bytes = 1,048,576"):
            asyncio.run(ask(make(server.url + "/rag", max_bytes=1024 * 1024)))
        assert len(server.requests) == 1  # too large is not retried
    assert sent["bytes"] < 32 * 1024 * 1024  # the client stopped reading; the server could not push it all


def test_a_declared_content_length_over_max_bytes_is_refused_before_reading():
    big = b'{"answer": "' + b"b" * 5000 + b'"}'
    with JSONServer({("POST", "/rag"): lambda r: Reply(200, raw=big)}) as server:
        with pytest.raises(ResponseTooLarge, match=r"declares 5,014 bytes, over max_bytes = 4,096"):
            asyncio.run(ask(make(server.url + "/rag", max_bytes=4096)))
        output = asyncio.run(ask(make(server.url + "/rag", max_bytes=6000)))  # under the limit: accepted
    assert output.answer == "b" * 5000


def test_max_bytes_defaults_to_10_mib_and_is_documented():
    field = HttpRAG.Options.model_fields["max_bytes"]
    assert field.default == 10 * 1024 * 1024 and "while reading" in field.description
