"""Loading samples and corpus documents through dataset-source components (never a plugin import).

``[corpus] paths = [...]`` is shorthand for the ``files`` dataset source's ``documents`` option.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..components import ComponentContext, Corpus, DatasetSource
from ..config import LoadedConfig
from ..errors import DatasetError, RagassayError
from ..models import Document, Sample
from ..refs import ComponentRef
from ..registry import Registry
from ..seen import DuplicateKey, SeenKeys
from .systems import ResolvedComponent, resolve_component

FILES_SOURCE = "files"


def resolve_dataset(loaded: LoadedConfig, registry: Registry) -> ResolvedComponent:
    section = loaded.config.dataset
    ref = ComponentRef(name=section.source, options=section.options)
    return resolve_component(registry, "dataset_source", ref, loaded, "dataset.source")


def stream_samples(dataset: ResolvedComponent, context: ComponentContext, limit: int | None) -> Iterator[Sample]:
    """The samples of the dataset source, streamed (at most ``limit``, so a large source is never read whole);
    question ids must be unique (checked with bounded memory: :mod:`ragassay.seen`), and a source that yields
    none is an error."""
    source: DatasetSource = dataset.build(context)
    seen = SeenKeys()
    try:
        for sample in _guarded_stream(source.samples, dataset):
            _raise_duplicate(dataset, seen.add(sample.question_id))
            yield sample
            if limit is not None and seen.count >= limit:
                break
        _raise_duplicate(dataset, seen.flush())
        if not seen.count:
            raise DatasetError(f"dataset '{dataset.info.name}' yielded no samples. Check [dataset] options.")
    finally:
        seen.close()


def _raise_duplicate(dataset: ResolvedComponent, duplicate: DuplicateKey | None) -> None:
    if duplicate is not None:
        raise DatasetError(
            f"dataset '{dataset.info.name}': question_id '{duplicate.key}' appears twice. "
            "Give every sample a unique question_id."
        )


def load_corpus(
    loaded: LoadedConfig, registry: Registry, context: ComponentContext, dataset: ResolvedComponent
) -> Corpus:
    """Documents from ``[corpus] paths``, ``[corpus] source``, or else the dataset source itself."""
    section = loaded.config.corpus
    documents: list[Document] = []
    if section.paths:
        files = resolve_component(
            registry,
            "dataset_source",
            ComponentRef(name=FILES_SOURCE, options={"documents": section.paths}),
            loaded,
            "corpus.paths",
        )
        documents += _guarded(files.build(context).documents, files)
    if section.source is not None:
        source = resolve_component(registry, "dataset_source", section.source, loaded, "corpus.source")
        documents += _guarded(source.build(context).documents, source)
    if not section.paths and section.source is None:
        documents += _guarded(dataset.build(context).documents, dataset)
    _check_unique(documents)
    return Corpus(documents)


def _guarded(produce, component: ResolvedComponent) -> list:
    """Materialise a source's output; unexpected exceptions become a DatasetError naming the source."""
    return list(_guarded_stream(produce, component))


def _guarded_stream(produce, component: ResolvedComponent) -> Iterator:
    """Stream a source's output; unexpected exceptions become a DatasetError naming the source."""
    try:
        yield from produce()
    except RagassayError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DatasetError(f"dataset source '{component.info.name}' failed: {type(exc).__name__}: {exc}") from exc


def _check_unique(documents: list[Document]) -> None:
    seen: set[str] = set()
    for doc in documents:
        if doc.id in seen:
            raise DatasetError(f"corpus: document id '{doc.id}' appears twice. Document ids must be unique.")
        seen.add(doc.id)
