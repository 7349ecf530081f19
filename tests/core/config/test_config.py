"""Config loading and validation: every error names file, key path, bad value and what is allowed."""

from __future__ import annotations

import textwrap

import pytest

from ragassay.config import load_config, parse_config
from ragassay.engine.systems import expand_systems, resolve_systems
from ragassay.errors import ComponentNotFoundError, ConfigError


def write(tmp_path, text, name="ragassay.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_minimal_config_fills_defaults(tmp_path):
    loaded = load_config(write(tmp_path, '[systems.a]\nretriever = "bm25"\ngenerator = "extractive"\n'))
    assert loaded.config.project.concurrency == 8
    assert [m.name for m in loaded.config.evaluation.metrics][0] == "token_recall"
    assert loaded.config.systems["a"].parts["retriever"].name == "bm25"


def test_folder_and_pyproject_tool_section(tmp_path):
    write(tmp_path, '[project]\nname = "x"\n[tool.ragassay.systems.a]\nretriever = "bm25"\n', "pyproject.toml")
    loaded = load_config(tmp_path)
    assert loaded.path.name == "pyproject.toml"
    assert "a" in loaded.config.systems


def test_pyproject_errors_are_prefixed_with_tool_section(tmp_path):
    write(tmp_path, "[tool.ragassay.project]\nconcurrency = 0\n[tool.ragassay.systems.a]\n", "pyproject.toml")
    with pytest.raises(ConfigError, match=r"pyproject.toml: tool.ragassay.project.concurrency: .*(got 0)"):
        load_config(tmp_path)


def test_unknown_key_suggests_the_closest_and_lists_allowed():
    with pytest.raises(ConfigError) as err:
        parse_config({"projet": {}, "systems": {"a": {}}}, "ragassay.toml")
    message = str(err.value)
    assert "ragassay.toml: projet: unknown key; did you mean 'project'?" in message
    assert "Allowed keys: project, corpus, dataset" in message


def test_bad_value_names_key_path_and_value():
    with pytest.raises(ConfigError, match=r"project.concurrency: .* \(got 'many'\)"):
        parse_config({"project": {"concurrency": "many"}, "systems": {"a": {}}}, "ragassay.toml")


def test_no_systems_is_an_error_when_running_but_not_when_generating(tmp_path):
    from ragassay.engine.project import Project
    from ragassay.plugin_manager import load_plugins

    parse_config({}, "ragassay.toml")  # a config that only generates samples needs no system
    project = Project.load(load_config(write(tmp_path, "[dataset]\nsource = 'files'\n")), load_plugins().registry)
    with pytest.raises(ConfigError, match=r"ragassay.toml: systems: no systems declared"):
        project.require_systems()


def test_invalid_toml_names_the_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[systems.a\n"))


def test_missing_file_and_empty_folder(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="ragassay init"):
        load_config(tmp_path)


def test_duplicate_metric_labels_rejected():
    with pytest.raises(ConfigError, match="metrics listed twice: recall_at_k"):
        parse_config({"systems": {"a": {}}, "evaluation": {"metrics": ["recall_at_k", "recall_at_k"]}}, "x.toml")


def test_judge_alias_and_labels():
    config = parse_config(
        {
            "systems": {"a": {}},
            "evaluation": {
                "judge": "match",
                "metrics": [{"name": "recall_at_k", "options": {"k": 1}, "label": "r@1"}, "recall_at_k"],
            },
        }
    )
    assert [j.name for j in config.evaluation.judges] == ["match"]
    assert [m.key for m in config.evaluation.metrics] == ["r@1", "recall_at_k"]


# -- systems: extends, grids, resolution -----------------------------------------------------------

SYSTEMS = """
[defaults]
chunker = { name = "recursive", options = { size = 100, overlap = 10 } }

[systems.base]
retriever = { name = "bm25", options = { k1 = 1.2 } }
generator = "extractive"
options = { top_k = 4 }

[systems.swap]
extends = "base"
retriever = "keyword"

[systems.tweak]
extends = "base"
retriever = { name = "bm25", options = { b = 0.5 } }

[grid.depth]
extends = "swap"
"options.top_k" = [1, 2]
retriever = ["keyword", "bm25"]
"""


def test_extends_swaps_one_part_and_merges_same_component_options(tmp_path, host):
    loaded = load_config(write(tmp_path, SYSTEMS))
    systems = {s.name: s for s in resolve_systems(loaded, host.registry)}
    swap, tweak = systems["swap"], systems["tweak"]
    assert swap.parts["retriever"].info.name == "keyword"
    assert swap.parts["generator"].info.name == "extractive"
    assert swap.rag.options.top_k == 4
    assert tweak.parts["retriever"].options.k1 == 1.2 and tweak.parts["retriever"].options.b == 0.5
    assert swap.parts["chunker"].options.size == 100  # from [defaults]


def test_grid_expands_every_combination(tmp_path):
    loaded = load_config(write(tmp_path, SYSTEMS))
    names = list(expand_systems(loaded.config, loaded))
    grid = [n for n in names if n.startswith("depth[")]
    assert grid == [
        "depth[top_k=1,retriever=keyword]",
        "depth[top_k=1,retriever=bm25]",
        "depth[top_k=2,retriever=keyword]",
        "depth[top_k=2,retriever=bm25]",
    ]


def test_unknown_component_lists_installed_and_closest(tmp_path, host):
    loaded = load_config(write(tmp_path, '[systems.a]\nretriever = "bm26"\ngenerator = "extractive"\n'))
    with pytest.raises(ComponentNotFoundError) as err:
        resolve_systems(loaded, host.registry)
    message = str(err.value)
    assert "ragassay.toml: systems.a.retriever: no retriever named 'bm26'. Did you mean 'bm25'?" in message
    assert "Installed: bm25, dense, hybrid, keyword" in message


def test_bad_component_option_names_the_path(tmp_path, host):
    loaded = load_config(
        write(tmp_path, '[systems.a]\nretriever = { name = "bm25", options = { k9 = 1 } }\ngenerator = "extractive"\n')
    )
    with pytest.raises(
        ConfigError,
        match=r"systems.a.retriever.options.k9: unknown key; did you mean 'k1'\? Allowed keys: variant, k1, b",
    ):
        resolve_systems(loaded, host.registry)


def test_unknown_role_and_missing_required_role(tmp_path, host):
    loaded = load_config(write(tmp_path, '[systems.a]\nretreiver = "bm25"\ngenerator = "extractive"\n'))
    with pytest.raises(
        ConfigError,
        match=r"systems.a.retreiver: rag 'naive' has no part 'retreiver'. Its parts: chunker, retriever, generator",
    ):
        resolve_systems(loaded, host.registry)
    loaded = load_config(write(tmp_path, '[systems.a]\ngenerator = "extractive"\n'))
    with pytest.raises(ConfigError, match=r"systems.a.retriever: rag 'naive' needs a retriever"):
        resolve_systems(loaded, host.registry)


def test_extends_errors(tmp_path, host):
    loaded = load_config(write(tmp_path, '[systems.a]\nextends = "b"\n[systems.b]\nextends = "a"\n'))
    with pytest.raises(ConfigError, match="circular extends"):
        resolve_systems(loaded, host.registry)
    loaded = load_config(write(tmp_path, '[systems.a]\nextends = "nope"\n'))
    with pytest.raises(ConfigError, match="systems.a.extends: no system named 'nope'"):
        resolve_systems(loaded, host.registry)
