"""``ragassay init``: write a commented starter config."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import click

from ..errors import ConfigError


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Overwrite an existing ragassay.toml.")
def init_command(directory: Path, force: bool) -> None:
    """Write a commented starter ragassay.toml into DIRECTORY (default: here)."""
    target = directory / "ragassay.toml"
    if target.exists() and not force:
        raise ConfigError(f"{target} already exists; nothing was written. Use --force to overwrite it.")
    directory.mkdir(parents=True, exist_ok=True)
    target.write_text(starter_config(), encoding="utf-8")
    click.echo(
        f"wrote {target}. Put documents in {directory / 'corpus'} and questions in "
        f"{directory / 'qa.jsonl'}, then run: ragassay run {directory}"
    )


def starter_config() -> str:
    """The text of the starter config."""
    return resources.files("ragassay.cli").joinpath("starter.toml").read_text(encoding="utf-8")


COMMANDS = [init_command]
