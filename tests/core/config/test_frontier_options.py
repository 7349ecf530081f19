"""``[evaluation] frontier``: the latency quantile and cost the frontier compares; defaults p50 and dollars; bad
values name the key, the value and what is allowed; a stored config is read back the same way."""

from __future__ import annotations

import pytest

from ragassay.config import parse_config
from ragassay.config.frontier_options import FrontierSettings, frontier_settings
from ragassay.errors import ConfigError

SYSTEMS = {"a": {}}


def test_the_defaults_are_the_median_and_dollars():
    settings = parse_config({"systems": SYSTEMS}).evaluation.frontier
    assert (settings.latency, settings.cost, settings.quantile) == ("p50", "dollars", 0.5)
    assert frontier_settings({}) == frontier_settings({"evaluation": {"decide": ["recall"]}}) == settings


def test_a_chosen_quantile_and_cost_round_trip_through_the_stored_config():
    config = parse_config({"systems": SYSTEMS, "evaluation": {"frontier": {"latency": "p95", "cost": "tokens"}}})
    assert (config.evaluation.frontier.quantile, config.evaluation.frontier.cost) == (0.95, "tokens")
    stored = config.model_dump(mode="json")  # what a run stores as its config_json
    assert frontier_settings(stored) == FrontierSettings(latency="p95", cost="tokens")
    assert frontier_settings({"evaluation": {"frontier": {"latency": "p99"}}}).quantile == 0.99


@pytest.mark.parametrize(
    ("frontier", "message"),
    [
        ({"latency": "p90"}, r"evaluation.frontier.latency: .*'p50', 'p95' or 'p99'.*\(got 'p90'\)"),
        ({"cost": "euros"}, r"evaluation.frontier.cost: .*'dollars' or 'tokens'.*\(got 'euros'\)"),
        ({"quantile": 0.9}, r"evaluation.frontier.quantile: unknown key"),
    ],
)
def test_a_bad_setting_names_the_key_and_what_is_allowed(frontier, message):
    with pytest.raises(ConfigError, match=message):
        parse_config({"systems": SYSTEMS, "evaluation": {"frontier": frontier}}, "ragassay.toml")


def test_a_bad_stored_setting_is_one_clear_error():
    with pytest.raises(ConfigError, match=r"\[evaluation\] frontier of the stored config .*latency.*Allowed"):
        frontier_settings({"evaluation": {"frontier": {"latency": "median"}}})
