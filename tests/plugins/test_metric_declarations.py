"""Every shipped metric declares its direction and value range on its own class (not by inheriting the default)."""

from __future__ import annotations

import pytest

from ragassay.components import Metric
from ragassay.plugin_manager import load_plugins

SHIPPED = ("ragassay.plugins.", "ragassay.reference_rags.")
RANGES = {"truthfulness": (1.0, 5.0), "relevance": (1.0, 5.0), "holistic_correctness": (1.0, 5.0)}
#: Shipped metrics where less is better: RAGChecker's error rates (hallucination, noise sensitivity, and
#: self-knowledge as their reading of "more grounded"), a perturbation's injection success, and a conversation
#: turn's unsupported claims.
LOWER = {
    "rc_hallucination",
    "rc_noise_sensitivity_in_relevant",
    "rc_noise_sensitivity_in_irrelevant",
    "rc_self_knowledge",
    "injection_success",
    "turn_unsupported",  # the share of a turn's claims nothing supports
    "turn_unsupported_offline",
}
LOWER |= {f"{name}_offline" for name in LOWER if name.startswith("rc_")}


def shipped_metrics():
    registry = load_plugins().registry
    found = [info.cls for info in registry.of_kind("metric") if info.cls.__module__.startswith(SHIPPED)]
    assert len(found) >= 17
    return found


def _declared(cls, name):
    return any(name in vars(klass) for klass in cls.__mro__ if klass is not Metric and issubclass(klass, Metric))


@pytest.mark.parametrize("cls", shipped_metrics(), ids=lambda cls: cls.name)
def test_direction_and_range_are_declared(cls):
    if "declared" in vars(cls):  # declared from its options (formula): tested with the metric itself
        return
    assert _declared(cls, "direction") and _declared(cls, "value_range")
    assert cls.direction == ("lower" if cls.name in LOWER else "higher")
    assert cls.value_range == RANGES.get(cls.name, (0.0, 1.0))
