"""Claim-level diagnosis in RAGChecker's terms (Ru et al., 2024): claims, their checks, and the metrics derived
from them. :mod:`.model` is the data (:class:`~.model.ClaimChecks`), :mod:`.formulas` the pure metric formulas."""
