"""Component references: how a config, or a component's options, names another component.

A reference is a registered name with options: ``"bm25"`` or ``{ name = "bm25", options = { k1 = 1.2 } }``.
Components that are made of other components (a hybrid retriever of retrievers, a dense retriever of an
embedder, a judge of a generator) type those options with the kind-specific reference classes below::

    class Options(BaseModel):
        model_config = ConfigDict(extra="forbid")
        embedder: EmbedderRef = Field(EmbedderRef(name="local"), description="Embedder that makes the vectors.")
        retrievers: list[RetrieverRef] = Field(description="Retrievers whose rankings are fused.")

ragassay resolves such references recursively when a run is planned: a nested component that is not
installed, or a bad nested option, is a configuration error (exit 2) before any work starts, and every nested
component's name, version and options become part of the stored spec and of the run's fingerprint. At run
time the component builds its parts with ``self.context.build(self.options.embedder)``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ComponentRef(BaseModel):
    """A component by name with its options: ``"bm25"`` or ``{ name = "bm25", options = { k1 = 1.2 } }``.

    ``kind`` is None on this generic class (the config decides the kind from where the reference stands); the
    subclasses (:class:`RetrieverRef`, :class:`GeneratorRef`, ...) fix it, so nested references can be resolved.
    """

    model_config = ConfigDict(extra="forbid")

    #: The component kind this reference names (set by the kind-specific subclasses).
    kind: ClassVar[str | None] = None

    name: str = Field(description="Registered component name ('plugin/name' for third-party).")
    options: dict[str, Any] = Field(default_factory=dict, description="Options, validated by the component.")
    label: str | None = Field(
        default=None, description="Name results are stored under (metrics, judges); default: the name."
    )

    @property
    def key(self) -> str:
        """The name results are stored under."""
        return self.label or self.name

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value


class ChunkerRef(ComponentRef):
    """A reference to a chunker."""

    kind: ClassVar[str | None] = "chunker"


class EmbedderRef(ComponentRef):
    """A reference to an embedder."""

    kind: ClassVar[str | None] = "embedder"


class RetrieverRef(ComponentRef):
    """A reference to a retriever."""

    kind: ClassVar[str | None] = "retriever"


class RerankerRef(ComponentRef):
    """A reference to a reranker."""

    kind: ClassVar[str | None] = "reranker"


class GeneratorRef(ComponentRef):
    """A reference to a generator (an LLM backend or an extractive reader)."""

    kind: ClassVar[str | None] = "generator"


class DatasetSourceRef(ComponentRef):
    """A reference to a dataset source."""

    kind: ClassVar[str | None] = "dataset_source"


class MetricRef(ComponentRef):
    """A reference to a metric."""

    kind: ClassVar[str | None] = "metric"


class JudgeRef(ComponentRef):
    """A reference to a judge."""

    kind: ClassVar[str | None] = "judge"
