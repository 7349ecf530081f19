"""``ragassay plugins``: installed plugins, their components and load errors."""

from __future__ import annotations

import json

import click

from .common import console


@click.command("plugins")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.option("--options", "show_options", is_flag=True, help="Also list every component's options.")
@click.option("--traceback", "show_traceback", is_flag=True, help="Show the traceback of each load error.")
def plugins_command(as_json: bool, show_options: bool, show_traceback: bool) -> None:
    """List plugins: name, origin distribution and version, components by kind, load errors."""
    from ..plugin_manager import get_plugin_host

    host = get_plugin_host()
    if as_json:
        click.echo(json.dumps(_as_dict(host), indent=2))
        return
    _print_table(host, show_options)
    _print_failures(host, show_traceback)


def _as_dict(host) -> dict:
    components = [{"kind": i.kind, "name": i.name, "plugin": i.plugin, "distribution": i.distribution,
                   "version": i.version, "description": i.description,
                   "options": i.cls.Options.model_json_schema()} for i in host.registry.all()]
    failures = [{"plugin": f.name, "distribution": f.distribution, "version": f.version, "error": f.error,
                 "hint": f.hint} for f in host.failures]
    return {"components": components, "failures": failures}


def _print_table(host, show_options: bool) -> None:
    from rich.table import Table

    table = Table(title="ragassay components", show_lines=False)
    for column in ("kind", "name", "plugin", "origin", "description"):
        table.add_column(column)
    for info in host.registry.all():
        origin = f"{info.distribution} {info.version}".strip()
        description = info.description
        if show_options:
            description += "".join(f"\n  {name}: {field.description or ''} (default {field.default!r})"
                                   for name, field in info.cls.Options.model_fields.items())
        table.add_row(info.kind, info.name, info.plugin, origin, description)
    console().print(table)


def _print_failures(host, show_traceback: bool) -> None:
    from rich.markup import escape

    out = console()
    if not host.failures:
        return
    out.print(f"\n[bold red]{len(host.failures)} plugin(s) failed to load[/]")
    for failure in host.failures:
        origin = f"{failure.distribution} {failure.version}".strip() or "unknown distribution"
        out.print(f"- [bold]{escape(failure.name)}[/] ({escape(origin)}): {escape(failure.error)}")
        out.print(f"  {failure.hint}")
        if show_traceback:
            out.print(failure.traceback, markup=False)


COMMANDS = [plugins_command]
