"""The lazy process-wide host: the plugin index decides when an entry point is imported, never what it registers."""

from __future__ import annotations

import json
from importlib import metadata

import pytest

from ragassay import plugin_index, plugin_manager
from ragassay.errors import ComponentNotFoundError
from ragassay.plugin_manager import load_plugins


@pytest.fixture
def index(tmp_path, monkeypatch):
    path = tmp_path / "index.json"
    monkeypatch.setenv("RAGASSAY_PLUGIN_INDEX", str(path))
    return path


def loaded(host) -> set[str]:
    """The plugins registered with pluggy so far (reading host.plugins would load the deferred ones)."""
    return {name for name, _ in host.pm.list_name_plugin()}


def test_first_start_loads_everything_and_writes_the_index(index):
    host = load_plugins(lazy=True)
    assert {"bm25", "keyword", "openai_llm"} <= loaded(host)
    entries = json.loads(index.read_text())["entries"]
    bm25 = next(key for key in entries if key.startswith("bm25=ragassay.plugins.bm25@ragassay=="))
    assert entries[bm25] == ["retriever:bm25"]


def test_a_known_entry_point_is_loaded_when_its_component_is_looked_up(index):
    load_plugins(lazy=True)  # writes the index
    host = load_plugins(lazy=True)
    assert loaded(host) == set()
    info = host.registry.get("retriever", "bm25")
    assert (info.plugin, info.distribution) == ("bm25", "ragassay")
    assert loaded(host) == {"bm25"}
    assert host.registry.get("judge", "correctness").plugin == "judges_correctness"
    assert loaded(host) == {"bm25", "judges_correctness"}


def test_listing_and_reporting_load_every_deferred_plugin(index):
    eager = load_plugins()
    load_plugins(lazy=True)
    for read in (lambda h: h.registry.all(), lambda h: h.plugins, lambda h: h.failures):
        host = load_plugins(lazy=True)
        assert loaded(host) == set()
        read(host)
        assert loaded(host) == set(eager.plugins)
    host = load_plugins(lazy=True)
    assert [i.name for i in host.registry.of_kind("retriever")] == [i.name for i in eager.registry.of_kind("retriever")]


def test_a_name_the_index_does_not_know_loads_everything_then_says_not_found(index):
    load_plugins(lazy=True)
    host = load_plugins(lazy=True)
    with pytest.raises(ComponentNotFoundError, match="no retriever named 'bm52'. Did you mean 'bm25'"):
        host.registry.get("retriever", "bm52")
    assert "keyword" in loaded(host)


def test_a_stale_index_costs_a_full_load_never_a_wrong_component(index):
    """The index says keyword provides bm25 (a plugin edited in place): the real bm25 is still found, and the
    index is corrected."""
    load_plugins(lazy=True)
    data = json.loads(index.read_text())
    keyword = next(key for key in data["entries"] if key.startswith("keyword="))
    bm25 = next(key for key in data["entries"] if key.startswith("bm25="))
    data["entries"][keyword] = ["retriever:bm25"]
    data["entries"][bm25] = []
    index.write_text(json.dumps(data))
    host = load_plugins(lazy=True)
    info = host.registry.get("retriever", "bm25")
    assert info.plugin == "bm25" and {"keyword", "bm25"} <= loaded(host)
    entries = json.loads(index.read_text())["entries"]
    assert entries[keyword] == ["retriever:keyword"] and entries[bm25] == ["retriever:bm25"]


def test_a_broken_entry_point_is_never_indexed_and_reported_on_every_start(index, monkeypatch):
    real = plugin_manager.installed
    broken = metadata.EntryPoint("broken_thing", "no_such_module_for_ragassay_tests", "ragassay")

    def with_broken(group, name=None):
        return [*real(group, name), broken]

    monkeypatch.setattr(plugin_manager, "installed", with_broken)
    load_plugins(lazy=True)
    assert not [key for key in json.loads(index.read_text())["entries"] if key.startswith("broken_thing=")]
    host = load_plugins(lazy=True)
    assert loaded(host) == set()  # everything else deferred; the broken one was tried again, and failed
    assert [f.name for f in host._failures] == ["broken_thing"]
    with pytest.raises(ComponentNotFoundError, match="'broken_thing' \\(ModuleNotFoundError"):
        host.registry.get("retriever", "broken_thing/fancy")


def test_a_new_entry_point_is_loaded_at_once_and_learned(index, monkeypatch):
    load_plugins(lazy=True)
    data = json.loads(index.read_text())
    keyword = next(key for key in data["entries"] if key.startswith("keyword="))
    del data["entries"][keyword]  # as if keyword had just been installed
    index.write_text(json.dumps(data))
    host = load_plugins(lazy=True)
    assert loaded(host) == {"keyword"}
    assert keyword in json.loads(index.read_text())["entries"]


@pytest.mark.parametrize("setting", ["off", "unwritable"])
def test_without_a_usable_index_every_plugin_is_loaded_at_start(setting, tmp_path, monkeypatch):
    if setting == "off":
        monkeypatch.setenv("RAGASSAY_PLUGIN_INDEX", "off")
    else:
        (tmp_path / "a-file").write_text("")
        monkeypatch.setenv("RAGASSAY_PLUGIN_INDEX", str(tmp_path / "a-file" / "index.json"))
    for _ in range(2):
        host = load_plugins(lazy=True)
        assert {"bm25", "keyword"} <= loaded(host)
        assert host.registry.get("retriever", "bm25").plugin == "bm25"


def test_the_default_index_is_per_environment_under_the_cache_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RAGASSAY_PLUGIN_INDEX", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = plugin_index.index_path()
    assert path.parent == tmp_path / "ragassay" and path.name.startswith("plugin-index-")
    monkeypatch.setattr(plugin_index.sys, "prefix", "/another/venv")
    assert plugin_index.index_path() != path


def test_an_unreadable_index_is_ignored(index):
    index.write_text("{not json")
    assert plugin_index.read_index(index) is None
    index.write_text(json.dumps({"format": 99, "entries": {}}))
    assert plugin_index.read_index(index) is None
    host = load_plugins(lazy=True)
    assert "bm25" in loaded(host)


def test_an_environment_switch_uses_the_index_but_never_rewrites_it(index, monkeypatch):
    load_plugins(lazy=True)
    before = index.read_text()
    monkeypatch.setenv("RAGASSAY_DISABLE_PLUGINS", "keyword")
    host = load_plugins(lazy=True)
    assert loaded(host) == set() and host.registry.get("retriever", "bm25").plugin == "bm25"
    with pytest.raises(ComponentNotFoundError):
        host.registry.get("retriever", "keyword")
    assert index.read_text() == before


def test_a_lazy_registry_pickles_whole_and_without_its_resolver(index):
    """Ray sends the registry to its workers (with cloudpickle): the copy holds every component, and no way back
    to this host (whose lock cannot be pickled)."""
    pickle = pytest.importorskip("cloudpickle")

    load_plugins(lazy=True)
    host = load_plugins(lazy=True)
    copy = pickle.loads(pickle.dumps(host.registry))
    assert copy.resolver is None and host.registry.resolver is None
    assert copy.get("retriever", "keyword").cls is host.registry.get("retriever", "keyword").cls
    assert len(copy.all()) == len(load_plugins().registry.all())


DUPLICATE = '''
from ragassay import Retriever, ScoredChunk, hookimpl


class Same(Retriever):
    """Returns nothing; its module says which distribution provided it."""

    name = "same"

    def index(self, chunks):
        pass

    def retrieve(self, query, k):
        return []


@hookimpl
def register_retrievers(register):
    register(Same)
'''

PROBE = """
import json
from ragassay.plugin_manager import defer_plugin_imports, get_plugin_host
defer_plugin_imports()  # as the ragassay command does
host = get_plugin_host()
info = host.registry.get("retriever", "dup/same")
print(json.dumps([info.cls.__module__, info.distribution, [f.error for f in host.failures if f.name == "dup"]]))
"""


def test_two_entry_points_of_one_name_load_the_same_winner_in_every_process(tmp_path):
    """Two installed distributions register the entry point ``dup``: eager or lazy, with the plugin index absent,
    written or rewritten, every process loads the same one and refuses the other, naming both."""
    import subprocess
    import sys

    from conftest import cli_env

    site = tmp_path / "site"
    for dist in ("dup_b", "dup_a"):  # written in reverse order: the folder's order must not decide
        info = site / f"{dist}-1.0.dist-info"
        info.mkdir(parents=True)
        (site / f"{dist}.py").write_text(DUPLICATE)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[ragassay]\ndup = {dist}\n")
    seen = []
    for index in ("off", *[str(tmp_path / "index.json")] * 4):
        env = cli_env(site, RAGASSAY_PLUGIN_INDEX=index)
        out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
        seen.append(json.loads(out.stdout))
    module, distribution, errors = seen[0]
    assert (module, distribution) == ("dup_a", "dup-a")
    assert errors == [
        "PluginError: plugin name 'dup' is installed twice: dup-a 1.0 (dup_a) is loaded, dup-b 1.0 (dup_b) is not; "
        "uninstall one of them"
    ]
    assert all(result == seen[0] for result in seen), seen
