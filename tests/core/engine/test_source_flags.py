"""``run --sample/--where`` applied to ``[dataset] options``: repeated keys, the config's own filters kept, and the
refusal for a source that has no such option (the CLI end to end: tests/plugins/test_traces.py)."""

from __future__ import annotations

import pytest

from ragassay.config import load_config
from ragassay.engine.source_flags import parse_where, with_source_options
from ragassay.errors import ConfigError
from ragassay.plugin_manager import get_plugin_host


def test_a_key_given_twice_takes_either_value():
    assert parse_where(["route=/a", "model=m", "route=/b", "route=/c=d"]) == {
        "route": ["/a", "/b", "/c=d"],
        "model": "m",
    }
    with pytest.raises(ConfigError, match="give KEY=VALUE"):
        parse_where(["=x"])


def _loaded(tmp_path, source: str, options: str):
    (tmp_path / "ragassay.toml").write_text(f'[dataset]\nsource = "{source}"\noptions = {{ {options} }}\n')
    return load_config(tmp_path)


def test_flags_add_to_the_configured_filters(tmp_path):
    loaded = _loaded(tmp_path, "traces", 'where = { model = "a", route = "/x" }, pair_by = "question"')
    registry = get_plugin_host().registry
    changed = with_source_options(loaded, registry, sample="5%", where=["route=/y"])
    options = changed.config.dataset.options
    assert options == {"where": {"model": "a", "route": "/y"}, "pair_by": "question", "sample": "5%"}
    assert loaded.config.dataset.options["where"] == {"model": "a", "route": "/x"}  # a copy: the original stays
    assert with_source_options(loaded, registry) is loaded


def test_a_source_without_the_option_is_refused(tmp_path):
    loaded = _loaded(tmp_path, "files", 'path = "qa.jsonl"')
    with pytest.raises(ConfigError, match="dataset source 'files' has no option 'where'"):
        with_source_options(loaded, get_plugin_host().registry, where=["a=b"])
