"""The ``local`` generator: a transformers causal LM on this machine's CPU (see :mod:`.generator`).

Its model loader (:mod:`.loader`: packaged GGUF, dequantised weights cached on disk) and micro-batcher
(:mod:`.batcher`) live beside it.
"""

from __future__ import annotations

from ragassay import hookimpl

from .generator import LocalBackend, LocalGenerator, LocalOptions

__all__ = ["LocalBackend", "LocalGenerator", "LocalOptions"]


@hookimpl
def register_generators(register):
    """Register the local generator."""
    register(LocalGenerator)
