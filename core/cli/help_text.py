"""The command list of ``--help``: each command's whole first sentence (or the ``short_help`` written for it),
wrapped to the terminal, where click cuts it at about 45 characters with '...'."""

from __future__ import annotations

import inspect

import click

ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.")  # a period that ends none of these ends a sentence


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph of ``text``: up to the first period that ends a word outside
    parentheses and is not an abbreviation (``e.g.``); the whole paragraph when there is none."""
    paragraph = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    depth = 0
    words = paragraph.split(" ")
    for index, word in enumerate(words):
        depth += word.count("(") - word.count(")")
        if depth <= 0 and word.endswith(".") and word.lower() not in ABBREVIATIONS:
            return " ".join(words[: index + 1])
    return paragraph


def short_help(command: click.Command) -> str:
    """What the command list shows for ``command``: its ``short_help``, else the first sentence of its help."""
    return command.short_help or first_sentence(command.help or "")


class ListsWholeSentences(click.Group):
    """A group whose ``--help`` lists each command with :func:`short_help`, never cut."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, short_help(command)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
