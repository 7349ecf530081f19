"""Claim-level diagnosis in RAGChecker's terms (Ru et al., 2024): claims, their checks, and the metrics derived
from them. :mod:`.model` is the data (:class:`~.model.ClaimChecks`), :mod:`.formulas` the pure metric formulas,
:mod:`.judging` the LLM claim extractor and checker, :mod:`.offline` the offline ones, :mod:`.metrics` the
metrics (``rc_*`` and ``rc_*_offline``), registered here (entry point ``claims``)."""

from ragassay import hookimpl


@hookimpl
def register_metrics(register):
    """Register RAGChecker's eleven metrics, each as an LLM-checked ``rc_<name>`` and an offline
    ``rc_<name>_offline``."""
    from .metrics import METRICS

    for cls in METRICS:
        register(cls)
