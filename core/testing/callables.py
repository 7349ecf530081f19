"""Evaluate RAG callables on samples without writing a project: :func:`evaluate` (the ``ragassay_evaluate``
fixture of :mod:`ragassay.testing.pytest_plugin`).

::

    from ragassay.testing.callables import evaluate

    def answer(question: str) -> str:
        return "Paris" if "France" in question else "I do not know"

    run = evaluate({"mine": answer}, [{"question_id": "q1", "question": "Capital of France?",
                                       "reference_answers": ["Paris"]}], results="results.db")
    run.compare()

Each callable runs through the ``python`` adapter (``reference_rags/adapters/python_adapter.py``): it takes
``question`` (a str), ``sample`` (a :class:`ragassay.Sample`, when its one parameter is named ``sample`` or
annotated ``Sample``) or ``(question, sample)``, may be sync or async, and returns a str, a dict with
``answer`` (and ``contexts``, ``context_ids``) or a :class:`ragassay.RAGOutput`.

The project (config, ``qa.jsonl``, response cache) is written beside the results database, under
``projects/<project>/``. A callable is addressed by its name and a digest of its source code, its default
arguments, the plain values its closure holds and ``version``: calling :func:`evaluate` again with the same
callables, samples and metrics resumes the stored run and calls nothing; changing the code starts a new run.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
import types
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..models import Sample

#: The callables being evaluated, addressed by the python adapter as ``ragassay.testing.callables:registered.<key>``.
registered = types.SimpleNamespace()

_PLAIN = (str, int, float, bool, type(None))


def evaluate(
    rag: Callable[..., Any] | Mapping[str, Callable[..., Any]],
    samples: Sequence[Mapping[str, Any] | Sample] | str | Path,
    *,
    results: str | Path,
    metrics: Sequence[str] | None = None,
    judges: Sequence[str] = (),
    project: str = "callables",
    version: str = "",
    new: bool = False,
) -> Any:
    """Run ``rag`` (one callable, or a mapping of system name to callable, in that order) on ``samples`` (dicts
    or Samples, or a JSONL file) and score them with ``metrics`` (default: the config's default,
    :data:`ragassay.config.DEFAULT_METRICS`; the retrieval metrics are unscored, with the reason, for a callable
    that returns no contexts) and ``judges``; returns the :class:`~ragassay.Run`.

    :param results: the results database (a SQLite file path or a SQLAlchemy URL); the project folder is
        written beside a SQLite file (``projects/<project>/``), else under the working directory.
    :param project: the project's name (also its folder): one name per test keeps their runs apart.
    :param version: anything else the answers depend on (a model file, an index); change it to start a new run.
    :param new: start a new run even if a stored one matches.
    """
    from ..api import run
    from . import to_toml

    systems = {"rag": rag} if callable(rag) else dict(rag)
    if not systems or not all(callable(f) for f in systems.values()):
        raise ConfigError("evaluate: give a callable or a mapping of system name to callable")
    folder = _project_folder(results, project)
    folder.mkdir(parents=True, exist_ok=True)
    _write_samples(folder / "qa.jsonl", samples)
    config = {
        "project": {"name": project, "results": _results_url(results)},
        "dataset": {"options": {"path": "qa.jsonl"}},
        "evaluation": {"judges": list(judges)} | ({} if metrics is None else {"metrics": list(metrics)}),
    }
    config |= {f"systems.{name}": _system(name, function, version) for name, function in systems.items()}
    (folder / "ragassay.toml").write_text(to_toml(config), encoding="utf-8")
    return run(folder, new=new)


def _project_folder(results: str | Path, project: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", project):
        raise ConfigError(f"evaluate: project name {project!r} must use only letters, digits, '_', '.', '-'")
    text = str(results)
    base = Path(text).parent if "://" not in text else Path.cwd() / ".ragassay-callables"
    return (base / "projects" / project).resolve()


def _results_url(results: str | Path) -> str:
    text = str(results)
    return text if "://" in text else str(Path(text).resolve())


def _write_samples(path: Path, samples: Sequence[Mapping[str, Any] | Sample] | str | Path) -> None:
    if isinstance(samples, (str, Path)):
        source = Path(samples)
        if not source.is_file():
            raise ConfigError(f"evaluate: no samples file at {source}; give a JSONL file or a list of samples")
        text = source.read_text(encoding="utf-8")
    else:
        rows = [s.model_dump(mode="json") if isinstance(s, Sample) else dict(s) for s in samples]
        if not rows:
            raise ConfigError("evaluate: no samples given; give at least one")
        text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _system(name: str, function: Callable[..., Any], version: str) -> dict[str, Any]:
    if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
        raise ConfigError(f"evaluate: system name {name!r} must use only letters, digits, '_', '-'")
    key = f"{name.replace('-', '_')}_{code_digest(function, version)}"
    setattr(registered, key, adapt(function))
    return {
        "rag": "python",
        "options": {"callable": f"ragassay.testing.callables:registered.{key}", "pass_sample": True},
    }


def code_digest(function: Callable[..., Any], version: str = "") -> str:
    """12 hex digits of sha256 over the function's source (or qualified name), defaults, plain closure values
    and ``version``: the same code gives the same digest in every process."""
    target = inspect.unwrap(function)
    try:
        source = inspect.getsource(target)
    except (OSError, TypeError):
        source = f"{getattr(target, '__module__', '')}.{getattr(target, '__qualname__', type(target).__name__)}"
    parts = [source, version]
    defaults = getattr(target, "__defaults__", None) or ()
    parts += [repr(d) for d in defaults if isinstance(d, _PLAIN)]
    for cell in getattr(target, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, _PLAIN):
            parts.append(repr(value))
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:12]


def adapt(function: Callable[..., Any]) -> Callable[[str, Sample], Any]:
    """``function`` as ``(question, sample) -> answer`` (the adapter's ``pass_sample`` form), sync or async."""
    takes = _takes(function)

    def arguments(question: str, sample: Sample) -> tuple:
        return {"question": (question,), "sample": (sample,), "both": (question, sample)}[takes]

    if inspect.iscoroutinefunction(function):

        @functools.wraps(function)
        async def call_async(question: str, sample: Sample) -> Any:
            return await function(*arguments(question, sample))

        return call_async

    @functools.wraps(function)
    def call(question: str, sample: Sample) -> Any:
        return function(*arguments(question, sample))

    return call


def _takes(function: Callable[..., Any]) -> str:
    """'question', 'sample' or 'both': what the callable's positional parameters ask for."""
    try:
        parameters = [
            p
            for p in inspect.signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
    except (TypeError, ValueError):
        return "question"
    if len(parameters) >= 2:
        return "both"
    if len(parameters) == 1 and (parameters[0].name == "sample" or parameters[0].annotation in (Sample, "Sample")):
        return "sample"
    if not parameters:
        raise ConfigError(f"evaluate: {getattr(function, '__name__', function)!r} takes no question argument")
    return "question"
