"""A loopback server speaking OpenAI's ``POST /v1/embeddings`` (deterministic vectors), for the real openai client.

    with embeddings_server(dim=8) as server:
        client = OpenAI(base_url=server.url + "/v1", api_key="test")
        client.embeddings.create(model="text-embedding-3-small", input=["a", "b"])
        server.requests[0].json["input"]   # what the client sent

Each vector is derived from a hash of its text (the same text always gets the same vector), so a test can
check order and content. ``reverse=True`` answers with the data items in reverse order (their ``index``
fields still right), as a server is allowed to.
"""

from __future__ import annotations

import hashlib

from servers.base import JSONServer, Reply, Request


def text_vector(text: str, dim: int) -> list[float]:
    """The deterministic vector the server returns for ``text``."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [round((digest[i % len(digest)] - 127.5) / 127.5, 6) for i in range(dim)]


def embeddings_server(dim: int = 8, *, reverse: bool = False, fail_status: int | None = None) -> JSONServer:
    """A :class:`JSONServer` with the embeddings route; ``fail_status`` makes every request fail."""

    def embeddings(request: Request) -> Reply:
        if fail_status is not None:
            return Reply(fail_status, {"error": {"message": "scripted failure", "type": "server_error"}})
        body = request.json or {}
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
        size = body.get("dimensions") or dim
        data = [
            {"object": "embedding", "index": i, "embedding": text_vector(text, size)} for i, text in enumerate(inputs)
        ]
        if reverse:
            data.reverse()
        tokens = sum(len(text.split()) for text in inputs)
        return Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    return JSONServer({("POST", "/v1/embeddings"): embeddings})
