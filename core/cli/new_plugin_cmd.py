"""``ragassay new-plugin``: write a working, pip-installable plugin package to start from."""

from __future__ import annotations

from pathlib import Path

import click

from ..plugin_starter import KINDS


@click.command("new-plugin")
@click.argument("name")
@click.option(
    "--kind",
    type=click.Choice(list(KINDS)),
    default="retriever",
    show_default=True,
    help="The kind of component the plugin provides (llm_judge: a judge asking a model, on ragassay.llm.LLMJudging).",
)
@click.option(
    "--dir",
    "directory",
    default=".",
    show_default=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder in which ragassay-NAME/ is written.",
)
@click.option("--force", is_flag=True, help="Overwrite the starter's files in an existing ragassay-NAME/ folder.")
def new_plugin_command(name: str, kind: str, directory: Path, force: bool) -> None:
    """Write ragassay-NAME/: a plugin package with one KIND component, its tests, README and entry point.

    NAME is lowercase letters, digits, '_' and '-'; the component is addressed as NAME/NAME in configs
    (with '-' written '_'). Install it with pip install -e ragassay-NAME, and run its tests with python -m pytest.
    """
    from ..plugin_starter import kind_words, plugin_names, write_package

    target = write_package(name, kind, directory, force=force)
    names = plugin_names(name, kind)
    click.echo(
        f"wrote {target}: the {kind_words(kind)} {names.plugin}/{names.plugin} "
        f"(class {names.cls} in src/{names.module}/__init__.py).\n"
        f"Next: cd {target} && python -m pytest, then pip install -e . and check ragassay plugins."
    )


COMMANDS = [new_plugin_command]
