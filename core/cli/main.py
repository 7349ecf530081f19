"""Entry point: the ``ragassay`` group, error handling (one line, exit 2) and ``--debug``."""

from __future__ import annotations

import sys

import click

from ..errors import RagassayError

EXIT_USER_ERROR = 2


class RagassayGroup(click.Group):
    """Turns ragassay errors into one line on stderr and exit code 2 (a traceback only with --debug)."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except RagassayError as exc:
            if ctx.meta.get("ragassay.debug"):
                raise
            _print_error(str(exc))
            ctx.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            _print_error("interrupted. Results stored so far are kept; re-run the same command to resume.")
            ctx.exit(130)
        except Exception as exc:  # noqa: BLE001 - a bug: say so briefly, traceback with --debug
            if ctx.meta.get("ragassay.debug"):
                raise
            _print_error(f"internal error: {type(exc).__name__}: {exc}. Re-run with --debug for the traceback.")
            ctx.exit(1)


def _print_error(message: str) -> None:
    lines = message.strip().splitlines() or ["unknown error"]
    click.echo(f"error: {lines[0]}", err=True)
    for line in lines[1:]:
        click.echo(f"       {line}", err=True)


@click.group(cls=RagassayGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show full tracebacks for errors.")
@click.version_option(package_name="ragassay", prog_name="ragassay")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """ragassay: how good is your RAG system, which module is to blame, and which configuration wins."""
    ctx.meta["ragassay.debug"] = debug


def _add_commands() -> None:
    from . import (cache_cmd, compare_cmd, decisions_cmd, generate_cmd, init_cmd, plugins_cmd, report_cmd, run_cmd,
                   runs_cmd, show_cmd)

    for module in (init_cmd, plugins_cmd, generate_cmd, run_cmd, runs_cmd, compare_cmd, show_cmd, report_cmd,
                   decisions_cmd, cache_cmd):
        for command in module.COMMANDS:
            cli.add_command(command)


_add_commands()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="ragassay")
