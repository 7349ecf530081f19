"""Plugin loading: failures recorded and never fatal, duplicates named, environment switches, namespacing."""

from __future__ import annotations

import pytest

from ragassay import hookimpl
from ragassay.components import Retriever
from ragassay.errors import ComponentNotFoundError
from ragassay.plugin_manager import load_plugins
from ragassay.registry import Registry


class Toy(Retriever):
    """A toy retriever."""

    name = "toy"


class Plugin:
    def __init__(self, *classes):
        self.classes = classes

    @hookimpl
    def register_retrievers(self, register):
        for cls in self.classes:
            register(cls)


def test_shipped_plugins_load_from_entry_points_with_bare_names():
    host = load_plugins()
    assert not host.failures, host.failures
    info = host.registry.get("retriever", "bm25")
    assert (info.plugin, info.distribution) == ("bm25", "ragassay")
    assert {"keyword", "bm25"} <= {i.name for i in host.registry.of_kind("retriever")}


def test_third_party_components_are_namespaced():
    host = load_plugins([("acme", Plugin(Toy))], entry_points=False)
    assert host.registry.get("retriever", "acme/toy").cls is Toy
    with pytest.raises(ComponentNotFoundError, match="Did you mean 'acme/toy'"):
        host.registry.get("retriever", "toy")


def test_duplicate_inside_a_plugin_names_both_and_registers_nothing():
    host = load_plugins([("acme", Plugin(Toy, Toy))], entry_points=False)
    assert "acme" not in host.plugins
    assert "duplicate retriever 'acme/toy': registered by plugin 'acme'" in host.failures[0].error
    assert host.registry.of_kind("retriever") == []


def test_duplicate_across_plugins_names_both():
    registry = Registry()
    registry.add("retriever", Toy, plugin="one", distribution="ragassay", version="1")
    with pytest.raises(Exception, match=r"registered by plugin 'one' \(ragassay 1\) and again by plugin 'two'"):
        registry.add("retriever", Toy, plugin="two", distribution="ragassay", version="2")


def test_invalid_component_is_recorded_not_raised():
    class NoName(Retriever):
        pass

    host = load_plugins([("bad", Plugin(NoName)), ("good", Plugin(Toy))], entry_points=False)
    assert [f.name for f in host.failures] == ["bad"]
    assert "a name must be lowercase" in host.failures[0].error
    assert "RAGASSAY_DISABLE_PLUGINS=bad" in host.failures[0].hint
    assert host.registry.get("retriever", "good/toy")


def test_misspelled_hook_is_a_loud_failure():
    class Typo:
        @hookimpl
        def register_retreivers(self, register):  # misspelled on purpose
            pass

    host = load_plugins([("typo", Typo())], entry_points=False)
    assert "register_retreivers" in host.failures[0].error


def test_disable_and_allow_lists(monkeypatch):
    monkeypatch.setenv("RAGASSAY_DISABLE_PLUGINS", "bm25, keyword")
    host = load_plugins()
    names = {i.name for i in host.registry.of_kind("retriever")}
    assert "bm25" not in names and "keyword" not in names
    monkeypatch.delenv("RAGASSAY_DISABLE_PLUGINS")
    monkeypatch.setenv("RAGASSAY_LOAD_PLUGINS", "bm25")
    host = load_plugins()
    assert [i.name for i in host.registry.all()] == ["bm25"]


def test_trace_prints_loads_and_hook_calls(monkeypatch, capsys):
    monkeypatch.setenv("RAGASSAY_TRACE_PLUGINS", "1")
    load_plugins([("acme", Plugin(Toy))], entry_points=False)
    err = capsys.readouterr().err
    assert "calling acme.register_retrievers" in err and "loaded plugin acme" in err


def test_an_installed_plugin_passed_in_process_too_is_registered_once():
    """A plugin's own tests pass its module in-process while it is pip-installed: no 'name already used'."""
    import ragassay.plugins.keyword as keyword_module
    from ragassay.plugin_manager import load_plugins

    host = load_plugins([("keyword", keyword_module)])
    assert not [f for f in host.failures if f.name == "keyword"]
    assert host.registry.get("retriever", "keyword") is not None
    other = load_plugins([("keyword", object())])  # a different object under a taken name is still refused
    assert [f.name for f in other.failures if "already used" in str(f.error)] == ["keyword"]
