"""``ragassay show`` (issue 38, item 12): systems in the config's order, not alphabetical, and each retrieved
context that is one of the sample's reference contexts marked."""

from __future__ import annotations

import json
import re

import pytest

from conftest import BASIC_CONFIG, ragassay_cli, write_project

pytestmark = pytest.mark.slow

# zeta before alpha: the config's order is not the alphabetical one
CONFIG = BASIC_CONFIG.replace("[systems.keyword]", "[systems.zeta]").replace(
    '[systems.bm25]\n    extends = "keyword"', '[systems.alpha]\n    extends = "zeta"'
)


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    root = tmp_path_factory.mktemp("show")
    config = write_project(root, CONFIG)
    result = ragassay_cli("run", str(config), "--quiet")
    assert result.returncode == 0, result.stderr
    return config


def test_systems_are_shown_in_config_order(scored):
    text = ragassay_cli("show", "-c", str(scored), _run_id(scored), "q2", env=_wide()).stdout
    assert text.index("system zeta") < text.index("system alpha")
    data = json.loads(ragassay_cli("show", "-c", str(scored), _run_id(scored), "q2", "--json").stdout)
    assert [o["system"] for o in data["outputs"]] == ["zeta", "alpha"]


def test_each_retrieved_reference_context_is_marked(scored):
    text = ragassay_cli("show", "-c", str(scored), _run_id(scored), "q2", env=_wide()).stdout
    contexts = re.findall(r"^  \[\d\] (\S+?)(#\d+)?( \(reference\))?: ", text, flags=re.MULTILINE)
    assert contexts, text
    for document, _chunk, mark in contexts:
        assert bool(mark) == (document == "corpus/beta.md"), (document, mark)
    assert any(mark for _d, _c, mark in contexts) and not all(mark for _d, _c, mark in contexts)


def _run_id(config) -> str:
    runs = json.loads(ragassay_cli("runs", "-c", str(config), "--json").stdout)
    return runs[0]["run"]


def _wide() -> dict[str, str]:
    from conftest import cli_env

    return cli_env(COLUMNS="200")
