"""The ``openai`` embedder: OpenAI embeddings (or any OpenAI-compatible server) through the openai client.

Texts are sent in batches of ``batch_size`` inputs per ``POST /embeddings`` request; the vectors are put
back in input order by each item's ``index``. The API key is read from the environment variable named by
``api_key_env`` and never stored in options (options are recorded with every run).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragassay import ConfigError, Embedder, Encoded, ProviderError, require

#: Vector sizes of OpenAI's embedding models (used when ``dimensions`` is not set).
KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


class OpenAIEmbedder(Embedder):
    """Embeds texts with OpenAI embeddings (text-embedding-3-small; ada-002 selectable) or a compatible server."""

    name = "openai"

    class Options(BaseModel):
        """Options of the OpenAI embedder."""

        model_config = ConfigDict(extra="forbid")

        model: str = Field(
            "text-embedding-3-small",
            description="Embedding model, e.g. text-embedding-3-small, "
            "text-embedding-3-large, text-embedding-ada-002 (the seeds' model).",
        )
        base_url: str | None = Field(
            None,
            description="API base URL of an OpenAI-compatible server (ending in "
            "/v1); None: OPENAI_BASE_URL or api.openai.com.",
        )
        api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the API key.")
        dimensions: int | None = Field(
            None,
            ge=1,
            description="Shortened vector size (text-embedding-3 models only); None: the model's native size.",
        )
        batch_size: int = Field(256, ge=1, le=2048, description="Texts per request (the API allows 2048).")
        max_input_chars: int | None = Field(
            24000,
            ge=1,
            description="Cut longer texts to this many characters (recorded as truncated); the API "
            "rejects inputs over 8191 tokens. None: send texts whole.",
        )
        timeout_s: float = Field(60.0, gt=0, description="Timeout of one request, in seconds.")
        max_retries: int = Field(3, ge=0, description="Retries of a failed request (the client's backoff).")

    @property
    def dimension(self) -> int | None:
        """Vector size: ``dimensions``, or the known size of the model, else None."""
        return self.options.dimensions or KNOWN_DIMENSIONS.get(self.options.model)

    def cache_identity(self) -> dict[str, Any]:
        """Model, server and the options that change vectors (not batch size, timeouts or the key)."""
        opts = self.options
        return {
            "model": opts.model,
            "base_url": self._base_url(),
            "dimensions": opts.dimensions,
            "max_input_chars": opts.max_input_chars,
        }

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        return self.encode(texts).vectors.tolist()

    def encode(self, texts: Sequence[str]) -> Encoded:
        """Vectors of ``texts`` as a float32 array, requesting ``batch_size`` texts at a time."""
        np = require("numpy", "openai")
        limit = self.options.max_input_chars
        texts = list(texts)
        sent = [text[:limit] if limit else text for text in texts]
        for i, text in enumerate(sent):
            if not text.strip():
                raise ConfigError(f"openai embedder: text {i} is empty; the embeddings API rejects empty input")
        rows: list[list[float]] = []
        size = self.options.batch_size
        for start in range(0, len(sent), size):
            rows.extend(self._request(sent[start : start + size]))
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1) if rows else np.zeros((0, 0), np.float32)
        return Encoded(vectors, [None] * len(texts), [len(s) < len(t) for s, t in zip(sent, texts)], None)

    def _request(self, batch: list[str]) -> list[list[float]]:
        """One embeddings request; the vectors in the order of ``batch``."""
        openai = require("openai", "openai", "the openai embedder")
        kwargs: dict[str, Any] = {"model": self.options.model, "input": batch, "encoding_format": "float"}
        if self.options.dimensions:
            kwargs["dimensions"] = self.options.dimensions
        try:
            response = self._client().embeddings.create(**kwargs)
        except openai.OpenAIError as exc:
            raise ProviderError(f"openai embedder: request to {self._base_url()} failed: {exc}") from exc
        items = sorted(response.data, key=lambda item: item.index)
        if [item.index for item in items] != list(range(len(batch))):
            raise ProviderError(
                f"openai embedder: asked for {len(batch)} embeddings, the server returned indexes "
                f"{[item.index for item in items]}"
            )
        return [list(item.embedding) for item in items]

    def _client(self):
        client = getattr(self, "_cached_client", None)
        if client is None:
            openai = require("openai", "openai", "the openai embedder")
            key = os.environ.get(self.options.api_key_env)
            if not key and self.options.base_url is None:
                raise ConfigError(
                    f"openai embedder: set the API key in the environment variable "
                    f"{self.options.api_key_env} (or point base_url at a compatible server)"
                )
            client = openai.OpenAI(
                api_key=key or "not-needed",
                base_url=self._base_url(),
                timeout=self.options.timeout_s,
                max_retries=self.options.max_retries,
            )
            self._cached_client = client
        return client

    def _base_url(self) -> str:
        return self.options.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
