"""Adapters that evaluate the user's own RAG system: a Python callable, an HTTP endpoint, or a file of
precomputed outputs. Each is a ``rag`` component, so it is compared with the reference systems in one run."""

from ragassay import hookimpl

from .http_adapter import HttpRAG
from .precomputed import PrecomputedRAG
from .python_adapter import PythonRAG


@hookimpl
def register_rags(register):
    register(PythonRAG)
    register(HttpRAG)
    register(PrecomputedRAG)
