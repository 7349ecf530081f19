"""Paths that must name a file: a folder given where a file belongs is one line, exit 2, that says it is a folder
and what file is expected (click's ``dir_okay=False`` prints usage and three lines; an output path that is a folder
was an internal error, exit 1)."""

from __future__ import annotations

from pathlib import Path

import click


def folder_given(where: str, path: Path | str, expected: str):
    """The :class:`~ragassay.errors.ConfigError` for a folder ``path`` given as ``where`` (an option or argument)
    where ``expected`` (e.g. 'a JSONL file of labels') belongs."""
    from ..errors import ConfigError

    return ConfigError(f"{where}: {path} is a folder; give {expected}")


class FilePath(click.Path):
    """A path to one file: an input to read (``exists=True``: it must exist) or an output to write.

    ``expected`` says what file belongs there; ``{folder}`` in it is replaced by the folder given (e.g.
    ``"a file to write, e.g. {folder}/report.html"``).
    """

    def __init__(self, expected: str, *, exists: bool = False):
        super().__init__(path_type=Path, exists=exists)
        self.expected = expected

    def convert(self, value, param, ctx):
        path = super().convert(value, param, ctx)
        if Path(path).is_dir():
            name = param.opts[0] if param is not None and param.param_type_name == "option" else None
            where = name or (param.human_readable_name if param is not None else "path")
            raise folder_given(where, path, self.expected.format(folder=str(path).rstrip("/")))
        return path
