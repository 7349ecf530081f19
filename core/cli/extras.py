"""The optional dependencies of the commands: which extra of ``pip install 'ragassay[...]'`` each command needs,
checked before the command does anything, so a missing one is one line naming the extra (exit 2), never an
``internal error: ModuleNotFoundError``.

A command that needs an extra calls :func:`require_extra` first; any other command that still meets a missing
optional package is reported the same way by the group (:func:`missing_extra`, from :mod:`ragassay.cli.main`).
"""

from __future__ import annotations

from ..errors import MissingDependencyError

#: What each extra of pyproject.toml installs, as the names ragassay imports (tests/core/cli checks this
#: against pyproject.toml). The first extra naming a module is the one a stray import error names.
EXTRAS: dict[str, tuple[str, ...]] = {
    "serve": ("starlette", "uvicorn"),
    "label": ("starlette", "uvicorn", "itsdangerous", "python_multipart"),
    "traces": (
        "google.protobuf",
        "google.rpc",
        "opentelemetry.proto",
        "opentelemetry.sdk",
        "opentelemetry.exporter.otlp.proto.http",
        "starlette",
        "uvicorn",
    ),
    "local": ("torch", "transformers", "gguf", "accelerate", "safetensors"),
    "dense": ("faiss",),
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "ray": ("ray", "psutil"),
    "postgres": ("psycopg",),
}


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported, without importing it (only its parent packages)."""
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing (or broken)
        return False


def _message(missing: list[str], extra: str, command: str) -> str:
    names = ", ".join(missing)
    return (
        f"{command} needs the '{extra}' extra, which is not installed (missing: {names}). "
        f"Install it with: pip install 'ragassay[{extra}]'"
    )


def require_extra(extra: str, command: str) -> None:
    """Raise :class:`ragassay.errors.MissingDependencyError` (one line naming the extra to install) unless every
    module of ``extra`` can be imported; ``command`` is what the message says needs it (``ragassay serve``)."""
    missing = [module for module in EXTRAS[extra] if not _installed(module)]
    if missing:
        raise MissingDependencyError(_message(missing, extra, command))


def missing_extra(exc: ImportError, command: str) -> MissingDependencyError | None:
    """The error to report for ``exc`` when it is an optional package of an extra that is not installed (its top
    package cannot be found); None for anything else (a bug: an import error inside an installed package)."""
    name = getattr(exc, "name", None) or ""
    for extra, modules in EXTRAS.items():
        for module in modules:
            if (name == module or name.startswith(module + ".") or module.startswith(name + ".")) and not _installed(
                module
            ):
                return MissingDependencyError(_message([module], extra, command))
    return None
