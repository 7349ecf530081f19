"""The ragassay hook specifications: the whole plugin API.

A plugin is a module (or object) with functions decorated by :data:`ragassay.hookimpl`, exposed through
an entry point in the ``ragassay`` group::

    [project.entry-points.ragassay]
    myplugin = "myplugin"

Every hook is ``register_<kind>(register)``: call ``register(ComponentClass)`` once per component. The
``register`` callable validates the class (right base class, a ``name``, a pydantic ``Options`` model),
stamps the plugin that registered it and refuses duplicates. Components of third-party plugins are
addressed as ``plugin/name`` in configs; the components that ship with ragassay keep bare names.

Hook implementations may omit the ``register`` parameter only if they register nothing (pluggy allows a
subset of arguments), so adding parameters later never breaks old plugins.
"""

from __future__ import annotations

from collections.abc import Callable

import pluggy

hookspec = pluggy.HookspecMarker("ragassay")

#: The callable passed to every ``register_<kind>`` hook: ``register(ComponentClass)``.
Register = Callable[[type], None]


# --------------------------------------------------------------------------------------------
# Corpus preparation
# --------------------------------------------------------------------------------------------


@hookspec
def register_chunkers(register: Register) -> None:
    """Register :class:`ragassay.Chunker` subclasses that split documents into chunks.

    :param register: call ``register(cls)`` for each chunker class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_chunkers(register):
            register(ParagraphChunker)   # ParagraphChunker.name == "paragraphs"
    """


@hookspec
def register_embedders(register: Register) -> None:
    """Register :class:`ragassay.Embedder` subclasses that turn texts into vectors.

    :param register: call ``register(cls)`` for each embedder class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_embedders(register):
            register(HashingEmbedder)    # HashingEmbedder.name == "hashing"
    """


# --------------------------------------------------------------------------------------------
# Systems under evaluation and their parts
# --------------------------------------------------------------------------------------------


@hookspec
def register_retrievers(register: Register) -> None:
    """Register :class:`ragassay.Retriever` subclasses.

    A retriever is built once per system, given every chunk of the corpus in ``index(chunks)``, then asked
    ``retrieve(query, k)`` for each sample.

    :param register: call ``register(cls)`` for each retriever class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_retrievers(register):
            register(TfIdfRetriever)     # usable as retriever = "myplugin/tfidf"
    """


@hookspec
def register_rerankers(register: Register) -> None:
    """Register :class:`ragassay.Reranker` subclasses that reorder candidate chunks for a query.

    A reranker is used by a retriever with a rerank step (``hybrid``'s ``reranker`` option): it is given the
    query and the candidates and returns at most ``k`` of them, best first, ranks 1..n.

    :param register: call ``register(cls)`` for each reranker class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_rerankers(register):
            register(CrossEncoderReranker)   # reranker = "myplugin/cross_encoder"
    """


@hookspec
def register_generators(register: Register) -> None:
    """Register :class:`ragassay.Generator` subclasses (extractive readers, LLM backends).

    :param register: call ``register(cls)`` for each generator class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_generators(register):
            register(EchoGenerator)      # EchoGenerator.name == "echo"
    """


@hookspec
def register_rags(register: Register) -> None:
    """Register :class:`ragassay.RAGSystem` subclasses: complete systems (reference RAGs, adapters).

    A RAG class declares the parts a config may set in ``roles`` (for example ``retriever`` and
    ``generator``); ragassay builds those parts from the config and passes them to the constructor.

    :param register: call ``register(cls)`` for each RAG class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_rags(register):
            register(MyCompanyRAG)       # a system with rag = "myplugin/company"
    """


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


@hookspec
def register_dataset_sources(register: Register) -> None:
    """Register :class:`ragassay.DatasetSource` subclasses that yield samples and/or corpus documents.

    ``samples()`` is read once per run, lazily: yield samples one at a time (a generator) and a dataset of any
    size streams through ragassay, which spools them to a temporary file and never holds them all. Returning a
    list still works (the source then holds it). Question ids must be unique: :class:`ragassay.SeenKeys`
    checks that with bounded memory.

    :param register: call ``register(cls)`` for each dataset source class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_dataset_sources(register):
            register(SquadSource)        # [dataset] source = "myplugin/squad"
    """


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


@hookspec
def register_metrics(register: Register) -> None:
    """Register :class:`ragassay.Metric` subclasses.

    A metric returns a float for one (sample, output) pair, or ``Unscored(reason=...)`` when it cannot be
    computed (never NaN). Document the formula and its source in ``formula`` and ``source``.

    :param register: call ``register(cls)`` for each metric class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_metrics(register):
            register(AnswerLength)       # AnswerLength.name == "answer_length"
    """


@hookspec
def register_judges(register: Register) -> None:
    """Register :class:`ragassay.Judge` subclasses that give a verdict (and explanation) per output.

    :param register: call ``register(cls)`` for each judge class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_judges(register):
            register(StrictMatchJudge)   # [evaluation] judges = ["myplugin/strict"]
    """


# --------------------------------------------------------------------------------------------
# Presentation
# --------------------------------------------------------------------------------------------


@hookspec
def register_sections(register: Register) -> None:
    """Register :class:`ragassay.RunSection` subclasses: sections of the HTML report and of ``ragassay serve``.

    A section computes blocks (:class:`ragassay.Section`, :class:`ragassay.Table`, :class:`ragassay.Note`, ...)
    from one stored run; it shows in each run of ``ragassay report --html`` (at its ``report_order``) and on the
    serve page it names (``page``): a page no other section uses gets its own route ``/runs/RUN/<page>`` and
    tab. ragassay's own sections (comparison, breakdowns, cost, robustness, drift, conversations, the failure
    browser) are registered through this hook too; a plugin's come after them. A section that raises shows as a
    note naming its plugin and the error; the rest of the report or page is unaffected.

    :param register: call ``register(cls)`` for each section class.
    :return: nothing; return values are ignored.

    Example::

        @hookimpl
        def register_sections(register):
            register(AnswerLengths)      # page = "lengths": /runs/RUN/lengths, a tab, a report section
    """


#: hook name -> component kind it registers.
HOOK_KINDS: dict[str, str] = {
    "register_chunkers": "chunker",
    "register_embedders": "embedder",
    "register_retrievers": "retriever",
    "register_rerankers": "reranker",
    "register_generators": "generator",
    "register_rags": "rag",
    "register_dataset_sources": "dataset_source",
    "register_metrics": "metric",
    "register_judges": "judge",
    "register_sections": "section",
}
