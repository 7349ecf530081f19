"""``ragassay plugins``: installed plugins, their components (and options) and load errors."""

from __future__ import annotations

import click

from .common import console, format_option, output_format
from .options_view import option_rows
from .render import Column, Table, emit, esc


@click.command("plugins")
@format_option
@click.option("--options", "show_options", is_flag=True, help="Also list every component's options.")
@click.option("--traceback", "show_traceback", is_flag=True, help="Show the traceback of each load error.")
def plugins_command(fmt: str | None, show_options: bool, show_traceback: bool) -> None:
    """List plugins: name, origin distribution and version, components by kind, load errors.

    With --options, each component's options: type, default (or "required") and description. --format json
    gives components (with their options' JSON schema) and failures; csv and markdown give the table.
    """
    from ..plugin_manager import get_plugin_host
    from ..present.sections.registered import Sections

    fmt = output_format(fmt)
    host = get_plugin_host()
    Sections.of().register()  # ragassay's own report sections, on the host as the report and serve have them
    infos = list(host.registry.all())
    if fmt == "json":
        emit(console(), [], fmt, data=_as_dict(host, infos))
    elif fmt != "rich":
        emit(console(), [options_table(infos) if show_options else components_table(infos)], fmt)
    elif show_options:
        _print_options(console(), infos)
    else:
        emit(console(), [components_table(infos)], fmt)
    if fmt == "rich":
        _print_failures(host, show_traceback)


def _as_dict(host, infos) -> dict:
    components = [
        {
            "kind": i.kind,
            "name": i.name,
            "plugin": i.plugin,
            "distribution": i.distribution,
            "version": i.version,
            "description": i.description,
            "options": i.cls.Options.model_json_schema(),
            "option_list": option_rows(i.cls.Options),
        }
        for i in infos
    ]
    failures = [
        {"plugin": f.name, "distribution": f.distribution, "version": f.version, "error": f.error, "hint": f.hint}
        for f in host.failures
    ]
    return {"components": components, "failures": failures}


def components_table(infos) -> Table:
    """One row per registered component."""
    rows = [
        {
            "kind": i.kind,
            "name": i.name,
            "plugin": i.plugin,
            "origin": f"{i.distribution} {i.version}".strip(),
            "description": i.description,
        }
        for i in infos
    ]
    columns = [Column(k) for k in ("kind", "name", "plugin", "origin", "description")]
    return Table("ragassay components", columns, rows, id_columns=("kind", "name"))


def options_table(infos) -> Table:
    """One row per component option: type, default ("required" when there is none) and description."""
    rows = [{"kind": i.kind, "component": i.name, **option} for i in infos for option in option_rows(i.cls.Options)]
    keys = ("kind", "component", "option", "type", "default", "description")
    return Table("ragassay component options", [Column(k) for k in keys], rows, id_columns=("component", "option"))


def _print_options(out, infos) -> None:
    """One block per component: what it is, then one line per option."""
    for info in infos:
        origin = f"{info.distribution} {info.version}".strip()
        out.print(
            f"[bold]{esc(info.kind)} {esc(info.name)}[/] ({esc(info.plugin)}, {esc(origin)}): {esc(info.description)}",
            highlight=False,
        )
        for option in option_rows(info.cls.Options):
            default = "required" if option["default"] == "required" else f"default {option['default']}"
            out.print(
                f"  [bold]{esc(option['option'])}[/] ({esc(option['type'])}; {esc(default)}): "
                f"{esc(option['description'])}",
                highlight=False,
            )


def _print_failures(host, show_traceback: bool) -> None:
    out = console()
    if not host.failures:
        return
    out.print(f"\n[bold red]{len(host.failures)} plugin(s) failed to load[/]")
    for failure in host.failures:
        origin = f"{failure.distribution} {failure.version}".strip() or "unknown distribution"
        out.print(f"- [bold]{esc(failure.name)}[/] ({esc(origin)}): {esc(failure.error)}")
        out.print(f"  {esc(failure.hint)}")
        if show_traceback:
            out.print(failure.traceback, markup=False)


COMMANDS = [plugins_command]
