"""``ragassay --help`` lists each command with its whole first sentence (or the short help written for it), never
cut with '...'; ``-V`` is the short form of ``--version`` (issue 38, item 12)."""

from __future__ import annotations

import re

import click
import pytest

from ragassay.cli.help_text import first_sentence, short_help
from ragassay.cli.main import cli

from conftest import cli_env, ragassay_cli


def test_first_sentence_skips_abbreviations_and_periods_in_parentheses():
    text = """Generate the samples of the source (e.g. GRAMMAR pairs, see docs/x.md. More) into a file. And more.

    A second paragraph."""
    assert (
        first_sentence(text)
        == "Generate the samples of the source (e.g. GRAMMAR pairs, see docs/x.md. More) into a file."
    )
    assert first_sentence("No period at all\n  wrapped over lines") == "No period at all wrapped over lines"


@pytest.mark.parametrize("width", ["80", "120"])
def test_the_command_list_shows_every_first_sentence_whole(width):
    listing = ragassay_cli("--help", env=cli_env(COLUMNS=width)).stdout
    commands = listing.split("Commands:\n", 1)[1]
    assert "..." not in commands
    entries = re.split(r"\n  (?=\S)", "\n" + commands.rstrip())[1:]
    shown = {entry.split()[0]: " ".join(entry.split()[1:]) for entry in entries}
    ctx = click.Context(cli)
    assert set(shown) == set(cli.list_commands(ctx))
    for name, text in shown.items():
        assert text == short_help(cli.get_command(ctx, name)), name
    assert shown["generate"].endswith("(e.g. GRAMMAR query-answer pairs) into a JSONL file.")
    assert shown["breakdown"] == "Per-group statistics of RUN (id or unique prefix; default: the newest run)."


def test_a_subgroup_lists_its_commands_whole_too():
    listing = ragassay_cli("traces", "--help", env=cli_env(COLUMNS="80")).stdout
    commands = listing.split("Commands:\n", 1)[1]
    assert "..." not in commands and "protobuf (.pb)." in " ".join(commands.split())


def test_dash_capital_v_is_the_short_form_of_version():
    short, long = ragassay_cli("-V"), ragassay_cli("--version")
    assert short.returncode == 0 and short.stdout == long.stdout and "ragassay, version" in short.stdout
