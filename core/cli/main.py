"""Entry point: the ``ragassay`` group, error handling (one line, exit 2) and ``--debug``."""

from __future__ import annotations

import sys

import click

from ..errors import RagassayError

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1
EXIT_INTERRUPTED = 130


class RagassayGroup(click.Group):
    """Ragassay errors: one line on stderr, exit 2; bugs: exit 1; Ctrl-C: 130. ``--debug`` adds the traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except RagassayError as exc:
            _report(ctx, exc, str(exc))
            ctx.exit(EXIT_USER_ERROR)
        except KeyboardInterrupt:
            _print_error("interrupted. Results stored so far are kept; re-run the same command to resume.")
            ctx.exit(EXIT_INTERRUPTED)
        except Exception as exc:  # noqa: BLE001 - a bug: say so briefly, traceback with --debug
            _report(ctx, exc, f"internal error: {type(exc).__name__}: {exc}. Re-run with --debug for the traceback.")
            ctx.exit(EXIT_INTERNAL_ERROR)


def _report(ctx: click.Context, exc: BaseException, message: str) -> None:
    """One line (more for a multi-line message); with --debug the traceback first. The exit code is the same."""
    if ctx.meta.get("ragassay.debug"):
        import traceback

        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    _print_error(message)


def _print_error(message: str) -> None:
    """``error: ...`` on stderr; a message quoting data or an endpoint's reply has its control characters shown
    as escapes (:func:`ragassay.text.terminal_safe`)."""
    from ..text import terminal_safe

    lines = terminal_safe(message.strip()).splitlines() or ["unknown error"]
    click.echo(f"error: {lines[0]}", err=True)
    for line in lines[1:]:
        click.echo(f"       {line}", err=True)


@click.group(cls=RagassayGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show full tracebacks for errors (the exit code stays the same).")
@click.version_option(package_name="ragassay", prog_name="ragassay")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """ragassay: how good is your RAG system, which module is to blame, and which configuration wins."""
    ctx.meta["ragassay.debug"] = debug


def _add_commands() -> None:
    from . import (
        align_cmd,
        breakdown_cmd,
        cache_cmd,
        compare_cmd,
        decisions_cmd,
        estimate_cmd,
        gate_cmd,
        generate_cmd,
        init_cmd,
        label_cmd,
        labels_cmd,
        meta_eval_cmd,
        new_plugin_cmd,
        plan_cmd,
        plugins_cmd,
        report_cmd,
        robustness_cmd,
        run_cmd,
        runs_cmd,
        serve_cmd,
        show_cmd,
        traces_cmd,
        unitxt_cmd,
    )

    for module in (
        init_cmd,
        plugins_cmd,
        generate_cmd,
        run_cmd,
        estimate_cmd,
        runs_cmd,
        compare_cmd,
        plan_cmd,
        show_cmd,
        report_cmd,
        decisions_cmd,
        meta_eval_cmd,
        label_cmd,
        labels_cmd,
        align_cmd,
        cache_cmd,
        unitxt_cmd,
        breakdown_cmd,
        gate_cmd,
        robustness_cmd,
        serve_cmd,
        new_plugin_cmd,
        traces_cmd,
    ):
        for command in module.COMMANDS:
            cli.add_command(command)


_add_commands()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``ragassay``, ``python -m ragassay``): runs the command, then ends the process
    without the interpreter's teardown where that is safe (:mod:`ragassay.cli.process_exit`)."""
    from .. import collector
    from . import process_exit

    collector.use_in_this_process()
    try:
        cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="ragassay")
    except SystemExit as exc:
        process_exit.end_process(exc)  # returns when the process must exit the ordinary way
        raise
    finally:
        process_exit.ordinary_exit()
