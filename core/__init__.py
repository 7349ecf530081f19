"""ragassay: measure how good a RAG system really is, which module is to blame, which configuration wins.

The public facade for plugin authors and notebook users::

    from ragassay import hookimpl, Retriever, ScoredChunk, Sample, RAGOutput

Plugins import only this facade, :mod:`ragassay.llm` (the model layer) and :mod:`ragassay.testing` (helpers
for testing a plugin); everything else is private and may change.

Names are imported lazily so that ``ragassay --help`` does not pay for pydantic, pluggy or SQLAlchemy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    # plugin API
    "hookimpl": "ragassay.plugin_manager",
    "hookspec": "ragassay.hookspecs",
    # components
    "Component": "ragassay.components",
    "ComponentContext": "ragassay.components",
    "Chunker": "ragassay.components",
    "Retriever": "ragassay.components",
    "Reranker": "ragassay.components",
    "Encoded": "ragassay.components",
    "Embedder": "ragassay.components",
    "Generator": "ragassay.components",
    "GenerationRequest": "ragassay.components",
    "Generation": "ragassay.components",
    "Metric": "ragassay.components",
    "DerivedMetric": "ragassay.components",
    "Judge": "ragassay.components",
    "DatasetSource": "ragassay.components",
    "RAGSystem": "ragassay.components",
    "Retrieved": "ragassay.components",
    "Role": "ragassay.components",
    "Corpus": "ragassay.components",
    "NoOptions": "ragassay.components",
    "PhaseProgress": "ragassay.phases",
    # sections of the HTML report and of ragassay serve's pages, and the blocks they are made of
    "RunSection": "ragassay.components",
    "Section": "ragassay.present.blocks",
    "Table": "ragassay.present.blocks",
    "Cell": "ragassay.present.blocks",
    "Note": "ragassay.present.blocks",
    "Items": "ragassay.present.blocks",
    "Plot": "ragassay.present.blocks",
    # data models
    "Document": "ragassay.models",
    "Chunk": "ragassay.models",
    "ScoredChunk": "ragassay.models",
    "Sample": "ragassay.models",
    "Turn": "ragassay.models",
    "Hop": "ragassay.models",
    "ToolCall": "ragassay.models",
    "Step": "ragassay.models",
    "turn_id": "ragassay.models",
    "RAGOutput": "ragassay.models",
    "TokenUsage": "ragassay.models",
    "Judgement": "ragassay.models",
    "MetricValue": "ragassay.models",
    "Unscored": "ragassay.models",
    "MetricResult": "ragassay.models",
    "ScoringUnit": "ragassay.models",
    "ComponentSpec": "ragassay.models",
    "SystemSpec": "ragassay.models",
    # component references
    "ComponentRef": "ragassay.refs",
    "ChunkerRef": "ragassay.refs",
    "EmbedderRef": "ragassay.refs",
    "RetrieverRef": "ragassay.refs",
    "RerankerRef": "ragassay.refs",
    "GeneratorRef": "ragassay.refs",
    "DatasetSourceRef": "ragassay.refs",
    "MetricRef": "ragassay.refs",
    "JudgeRef": "ragassay.refs",
    # errors
    "RagassayError": "ragassay.errors",
    "ConfigError": "ragassay.errors",
    "PluginError": "ragassay.errors",
    "ComponentNotFoundError": "ragassay.errors",
    "MissingDependencyError": "ragassay.errors",
    "DatasetError": "ragassay.errors",
    "StoreError": "ragassay.errors",
    "ProviderError": "ragassay.errors",
    "require": "ragassay.errors",
    # text helpers shared by lexical components
    "words": "ragassay.text",
    "STOPWORDS": "ragassay.text",
    "sentences": "ragassay.text",
    "answer_tokens": "ragassay.text",
    "normalize_answer": "ragassay.text",
    "text_bytes": "ragassay.text",
    # a json.JSONDecodeError as "line L, column C: what is wrong" in words (file readers of plugins)
    "describe_json_error": "ragassay.text",
    # token overlap and id ranking in Unitxt's semantics (lexical metrics)
    "token_bag": "ragassay.lexical",
    "TokenBag": "ragassay.lexical",
    "Overlap": "ragassay.lexical",
    "overlap": "ragassay.lexical",
    "best_overlap": "ragassay.lexical",
    "reciprocal_rank": "ragassay.lexical",
    "average_precision": "ragassay.lexical",
    "relevance_flags": "ragassay.lexical",
    # unique ids of a large stream, with bounded memory (dataset sources)
    "SeenKeys": "ragassay.seen",
    "DuplicateKey": "ragassay.seen",
    # Unitxt's RAG task layout (JSONL)
    "UnitxtRecord": "ragassay.unitxt",
    "read_unitxt": "ragassay.unitxt",
    "record_to_sample": "ragassay.unitxt",
    "sample_to_record": "ragassay.unitxt",
    # seeded sampling shared by dataset sources and analysis
    "stratify_group": "ragassay.sampling",
    "keep_unbalanced": "ragassay.sampling",
    "check_fractions": "ragassay.config.analysis",
    # estimates and budgets (docs/llm.md)
    "CallPattern": "ragassay.models",
    "Hints": "ragassay.models",
    "Budget": "ragassay.llm.budget",
    "BudgetExhausted": "ragassay.llm.budget",
    # running
    "run": "ragassay.api",
    "Run": "ragassay.notebook",
    "open_run": "ragassay.notebook",
    "load_config": "ragassay.config",
    "load_plugins": "ragassay.plugin_manager",
    "load_run": "ragassay.notebook",
    # production traces (docs/traces.md)
    "read_traces": "ragassay.traces",
    "Trace": "ragassay.traces",
    "TraceMapping": "ragassay.traces",
    "dataset_mapping": "ragassay.traces",
    "Unmapped": "ragassay.traces",
    "scan_traces": "ragassay.traces",
    "TraceLookup": "ragassay.traces",
    "open_traces_store": "ragassay.traces",
    "describe_unmapped": "ragassay.traces",
    "scan_sessions": "ragassay.traces",
    # trajectories from spans, ATIF files and adapters' step lists (docs/traces.md, docs/own-rag.md)
    "trace_trajectory": "ragassay.traces",
    "spans_to_trajectory": "ragassay.traces",
    "SpanTrajectory": "ragassay.traces",
    "read_atif": "ragassay.traces",
    "load_atif": "ragassay.traces",
    "AtifTrajectory": "ragassay.traces",
    "steps_from_dicts": "ragassay.traces",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragassay' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # pragma: no cover
    from .components import *  # noqa: F401,F403
    from .errors import *  # noqa: F401,F403
    from .models import *  # noqa: F401,F403
    from .refs import *  # noqa: F401,F403
