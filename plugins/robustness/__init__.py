"""Robustness: seeded perturbations of a system's retrieved chunks or question (issue 25).

The ``perturbed`` rag wraps another system of the run and applies one operator; the operators are pure, seeded
functions (:mod:`.context_ops`, :mod:`.counterfactual`, :mod:`.injection`, :mod:`.question_ops`), registered by
name (:func:`.base.register_operator`).
"""

from __future__ import annotations

from ragassay import hookimpl

from .wrapper import PerturbedRAG


@hookimpl
def register_rags(register):
    register(PerturbedRAG)
