"""Meta-tests that keep the plugin surface and the codebase honest."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import statistics
from pathlib import Path

import pytest

import ragassay
from ragassay import hookspecs
from ragassay.plugin_manager import load_plugins

REPO = Path(__file__).resolve().parent.parent
HOOKS = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]


def all_modules():
    names = []
    for package in ("ragassay", "ragassay.plugins", "ragassay.reference_rags"):
        module = importlib.import_module(package)
        names.append(package)
        names += [m.name for m in pkgutil.walk_packages(module.__path__, package + ".") if not m.name.endswith("__main__")]
    return sorted(set(names))


@pytest.mark.parametrize("name", all_modules())
def test_every_module_imports(name):
    importlib.import_module(name)


def test_hooks_match_the_kind_table():
    assert set(HOOKS) == set(hookspecs.HOOK_KINDS)


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_is_documented(hook):
    doc = inspect.getdoc(getattr(hookspecs, hook)) or ""
    assert ":param register:" in doc and ":return:" in doc and "Example::" in doc
    reference = (REPO / "docs" / "plugins.md").read_text()
    assert f"{hook}(register)" in reference, f"docs/plugins.md does not document {hook}(register)"


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_has_a_test(hook):
    tests = "\n".join(p.read_text() for p in (REPO / "tests").rglob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", tests), f"no test_hook_{hook}"


def test_shipped_components_are_documented():
    host = load_plugins()
    metrics_doc = (REPO / "docs" / "metrics.md").read_text()
    for info in host.registry.all():
        if info.distribution != "ragassay":
            continue
        assert info.description, f"{info.kind} {info.name} has no docstring"
        for field_name, field in info.cls.Options.model_fields.items():
            assert field.description, f"{info.kind} {info.name}: option {field_name} has no description"
        if info.kind == "metric":
            assert info.cls.formula and info.cls.source, f"metric {info.name} lacks formula or source"
            assert f"`{info.name}`" in metrics_doc, f"docs/metrics.md does not document {info.name}"


def test_public_facade_resolves():
    for name in ragassay.__all__:
        assert getattr(ragassay, name) is not None


def test_module_size_budget():
    files = [p for folder in ("core", "plugins", "reference_rags") for p in (REPO / folder).rglob("*.py")]
    sizes = {str(p.relative_to(REPO)): len(p.read_text().splitlines()) for p in files}
    assert max(sizes.values()) <= 700, max(sizes.items(), key=lambda kv: kv[1])
    assert statistics.median(sizes.values()) < 200


def test_hook_reference_in_docs_is_generated_from_hookspecs():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(REPO / "docs" / "generate_hook_reference.py"), "--check"])
    assert result.returncode == 0, "docs/plugins.md is stale: run python docs/generate_hook_reference.py"


def test_plugin_tutorial_code_works():
    text = (REPO / "docs" / "plugins.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    code = "\n".join(line[3:] if line.startswith("   ") else line for line in code.splitlines())
    import types

    module = types.ModuleType("ragassay_tfidf")
    exec(compile(code, "docs/plugins.md", "exec"), module.__dict__)
    host = load_plugins([("tfidf", module)], entry_points=False)
    assert not host.failures
    retriever = host.registry.get("retriever", "tfidf/tfidf").cls()
    from ragassay.models import Chunk

    retriever.index([Chunk(id=f"d{i}#0", document_id=f"d{i}", text=t) for i, t in
                     enumerate(["salmon fishing in rivers", "gamma rays and decay", "rivers of Zürich"])])
    assert [hit.chunk.id for hit in retriever.retrieve("salmon rivers", 2)] == ["d0#0", "d2#0"]
