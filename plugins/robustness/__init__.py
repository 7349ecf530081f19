"""Perturbation tests: operators, the ``perturbed`` rag and the metrics per perturbation (docs/robustness.md)."""
