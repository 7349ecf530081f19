"""The plugin starter behind ``ragassay new-plugin``: a pip-installable plugin package from templates.

The templates live in ``starter_templates/`` (package data): ``common/`` holds the files every package gets
(``pyproject.toml``, ``README.md``, ``.gitignore``), and one folder per kind holds the component module and
its tests. Placeholders are :class:`string.Template` fields (``$plugin``, ``$cls``, ...), so the Python
templates keep their braces. Names: for ``new-plugin my-tfidf`` the distribution is ``ragassay-my-tfidf``,
the import package ``ragassay_my_tfidf``, the entry point and component name ``my_tfidf``, and configs
address the component as ``my_tfidf/my_tfidf``.
"""

from __future__ import annotations

import dataclasses
import keyword
import re
from importlib import resources
from pathlib import Path
from string import Template

from .errors import ConfigError

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")
#: Longest NAME: the generated code keeps its lines within 120 characters up to this length.
MAX_NAME_LENGTH = 30


#: What the README says about the generated tests, unless a kind says more.
TESTS_NOTE = (
    "The tests build the component alone with `ragassay.testing.component`, then run a tiny project through\n"
    "ragassay's real runner and results store with `ragassay.testing.run_project`."
)


@dataclasses.dataclass(frozen=True)
class KindTemplate:
    """What differs between kinds: the class name suffix, a one-line summary and a config snippet; for kinds
    beyond the component kinds (``llm_judge``), the component kind it registers, extra test requirements, extra
    files (path -> template) and what the README says about the tests."""

    suffix: str
    summary: str
    usage: str
    registers: str = ""  # the component kind (default: the kind itself)
    test_requires: tuple[str, ...] = ()
    extra_files: tuple[tuple[str, str], ...] = ()
    tests_note: str = TESTS_NOTE


#: The kinds ``new-plugin`` writes (``--kind``), in the order ``--help`` lists them.
KINDS: dict[str, KindTemplate] = {
    "retriever": KindTemplate(
        "Retriever",
        "a retriever that ranks chunks by the query words they share.",
        '[systems.$plugin]\nretriever = "$plugin/$plugin"\ngenerator = "extractive"',
    ),
    "generator": KindTemplate(
        "Generator",
        "a generator that answers with the context sentence sharing the most question words.",
        '[systems.$plugin]\nretriever = "bm25"\ngenerator = "$plugin/$plugin"',
    ),
    "metric": KindTemplate(
        "Metric",
        "a conciseness metric: the reference answer's length over the answer's length, at most 1.",
        '[evaluation]\nmetrics = ["$plugin/$plugin", "exact_match"]',
    ),
    "judge": KindTemplate(
        "Judge",
        "a deterministic judge: correct when the answer contains enough of a reference answer's words.",
        '[evaluation]\njudges = ["$plugin/$plugin"]',
    ),
    "llm_judge": KindTemplate(
        "Judge",
        "an LLM judge: asks a model whether the answer agrees with a reference answer, explanation first.",
        '[evaluation]\njudges = [\n  { name = "$plugin/$plugin", options = { generator = "openai" } },\n]\n'
        '# generator: the judge model, any generator ("openai", { name = "openai", options = { model = "gpt-4o" } })',
        registers="judge",
        test_requires=("ragassay[openai]>=$ragassay_version",),
        extra_files=(("tests/loopback_model.py", "llm_judge/loopback_model.py.tmpl"),),
        tests_note=(
            "The judge stands on `ragassay.llm.LLMJudging` (explanation first, validated replies, bounded re-asks,\n"
            "an identity). The tests drive it against a scripted OpenAI-compatible model on 127.0.0.1\n"
            "(`tests/loopback_model.py`) through ragassay's real `openai` generator, alone and in a tiny project run\n"
            "with `ragassay.testing.run_project`: no key, no traffic off the machine."
        ),
    ),
    "dataset_source": KindTemplate(
        "Source",
        "a dataset source reading samples from a JSONL file.",
        '[dataset]\nsource = "$plugin/$plugin"\noptions = { path = "questions.jsonl" }',
    ),
    "rag": KindTemplate(
        "RAG",
        "a RAG system that retrieves with a named retriever and answers with the best-matching sentence.",
        '[systems.$plugin]\nrag = "$plugin/$plugin"\nretriever = "keyword"          # any retriever; swap it freely',
    ),
    "chunker": KindTemplate(
        "Chunker",
        "a chunker that splits documents into paragraphs.",
        '[systems.$plugin]\nchunker = "$plugin/$plugin"\nretriever = "bm25"\ngenerator = "extractive"',
    ),
    "reranker": KindTemplate(
        "Reranker",
        "a reranker that reorders candidates by the query words they share.",
        '[systems.$plugin]\ngenerator = "extractive"\n\n[systems.$plugin.retriever]\nname = "hybrid"\n\n'
        '[systems.$plugin.retriever.options]\nretrievers = ["keyword", "bm25"]\nreranker = "$plugin/$plugin"',
    ),
}


@dataclasses.dataclass(frozen=True)
class PluginNames:
    """The names derived from ``new-plugin NAME``."""

    given: str
    plugin: str  # entry point and component name: NAME with '-' -> '_'
    dist: str  # distribution (what pip installs): ragassay-NAME
    module: str  # import package: ragassay_<plugin>
    cls: str  # component class: CamelCase plugin + kind suffix


def plugin_names(name: str, kind: str) -> PluginNames:
    """Validate ``name`` and derive the package names; raise :class:`ragassay.ConfigError` if it is unusable."""
    if kind not in KINDS:
        raise ConfigError(f"unknown plugin kind '{kind}'; choose one of: {', '.join(KINDS)}")
    if name.startswith(("ragassay-", "ragassay_")):
        raise ConfigError(
            f"plugin name '{name}' already starts with 'ragassay'; give the name without it "
            f"(ragassay new-plugin {name[len('ragassay-') :]}), the package is called ragassay-NAME"
        )
    plugin = name.replace("-", "_")
    if len(name) > MAX_NAME_LENGTH:
        raise ConfigError(f"plugin name '{name}' is {len(name)} characters long; use at most {MAX_NAME_LENGTH}")
    if not _NAME.match(name) or not plugin.isidentifier() or keyword.iskeyword(plugin) or plugin.endswith("_"):
        raise ConfigError(
            f"plugin name '{name}' is not usable: use lowercase letters, digits, '_' and '-', starting with a "
            "letter and not ending with '-' or '_', so that it becomes a Python identifier with '-' -> '_' "
            "(for example: tfidf, my-retriever)"
        )
    camel = "".join(part.capitalize() for part in plugin.split("_") if part)
    return PluginNames(name, plugin, f"ragassay-{name}", f"ragassay_{plugin}", camel + KINDS[kind].suffix)


def render(name: str, kind: str) -> dict[str, str]:
    """The files of the package for plugin ``name`` of ``kind``: relative path -> text."""
    names = plugin_names(name, kind)
    fields = _fields(names, kind)
    files = {
        "pyproject.toml": "common/pyproject.toml.tmpl",
        "README.md": "common/README.md.tmpl",
        ".gitignore": "common/gitignore.tmpl",
        f"src/{names.module}/__init__.py": f"{kind}/component.py.tmpl",
        "tests/conftest.py": "common/conftest.py.tmpl",
        f"tests/test_{names.plugin}.py": f"{kind}/test_component.py.tmpl",
        **dict(KINDS[kind].extra_files),
    }
    return {path: _template(source).substitute(fields) for path, source in files.items()}


def write_package(name: str, kind: str, directory: Path, *, force: bool = False) -> Path:
    """Write the package into ``directory / ragassay-NAME`` and return that folder.

    An existing folder is refused unless ``force``; with ``force`` the starter's files are overwritten (the
    paths are the same for every kind) and any other file in the folder is kept.
    """
    files = render(name, kind)
    target = directory / plugin_names(name, kind).dist
    if target.exists() and not force:
        raise ConfigError(f"{target} already exists; nothing was written. Use --force to replace it.")
    if target.exists() and not target.is_dir():
        raise ConfigError(f"{target} exists and is not a folder; remove it or choose another --dir")
    for path, text in files.items():
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_text(text, encoding="utf-8")
    return target


def _fields(names: PluginNames, kind: str) -> dict[str, str]:
    from . import __version__

    spec = KINDS[kind]
    fields = {
        "plugin": names.plugin,
        "dist": names.dist,
        "module": names.module,
        "cls": names.cls,
        "kind": kind,
        "kind_words": kind_words(kind),
        "registers": spec.registers or kind,
        "summary": spec.summary,
        "ragassay_version": __version__,
        "tests_note": spec.tests_note,
    }
    fields["usage"] = Template(spec.usage).substitute(fields)
    requires = ["pytest>=8", *(Template(r).substitute(fields) for r in spec.test_requires)]
    fields["test_requires"] = ", ".join(f'"{r}"' for r in requires)
    return fields


def kind_words(kind: str) -> str:
    """The kind in words: ``dataset_source`` -> ``dataset source``, ``llm_judge`` -> ``LLM judge``."""
    return kind.replace("_", " ").replace("llm ", "LLM ")


def _template(relative: str) -> Template:
    text = resources.files("ragassay").joinpath("starter_templates", *relative.split("/")).read_text(encoding="utf-8")
    return Template(text)
