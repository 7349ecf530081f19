"""Entry point: the ``ragassay`` group, error handling (one line, exit 2) and ``--debug``."""

from __future__ import annotations

import sys

import click

from ..errors import RagassayError
from .help_text import ListsWholeSentences

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1
EXIT_INTERRUPTED = 130

#: Every command of the group: its name, and the module of ``ragassay.cli`` that defines it (in its ``COMMANDS``).
#: A module is imported when one of its commands is asked for: ``ragassay run`` imports the ``run`` command's
#: module and none of the other 22 (about 13 ms less start-up); ``ragassay --help`` lists, so imports, them all.
COMMAND_MODULES: dict[str, str] = {
    "init": "init_cmd",
    "plugins": "plugins_cmd",
    "generate": "generate_cmd",
    "run": "run_cmd",
    "estimate": "estimate_cmd",
    "runs": "runs_cmd",
    "compare": "compare_cmd",
    "plan": "plan_cmd",
    "show": "show_cmd",
    "report": "report_cmd",
    "decisions": "decisions_cmd",
    "meta-eval": "meta_eval_cmd",
    "label": "label_cmd",
    "labels": "labels_cmd",
    "align": "align_cmd",
    "cache": "cache_cmd",
    "unitxt": "unitxt_cmd",
    "breakdown": "breakdown_cmd",
    "cost": "breakdown_cmd",
    "gate": "gate_cmd",
    "robustness": "robustness_cmd",
    "serve": "serve_cmd",
    "new-plugin": "new_plugin_cmd",
    "traces": "traces_cmd",
    "judges": "judges_cmd",
    "qrels": "qrels_cmd",
    "watch": "watch_cmd",
}


class RagassayGroup(ListsWholeSentences):
    """Ragassay errors (and an optional package of an extra that is not installed): one line on stderr, exit 2;
    bugs: exit 1; Ctrl-C: 130. ``--debug`` adds the traceback. ``--help`` lists each command with its whole first
    sentence (:mod:`ragassay.cli.help_text`).

    Commands are imported on first use (:data:`COMMAND_MODULES`); ``add_command`` still adds one directly.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(COMMAND_MODULES))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            import importlib

            for command in importlib.import_module(f"{__package__}.{module}").COMMANDS:
                self.commands.setdefault(command.name, command)
        return self.commands.get(cmd_name)

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
            missing = _missing_extra(ctx, exc)
            if missing is not None:  # an optional package of an extra that is not installed: the user's to fix
                _report(ctx, exc, str(missing))
                ctx.exit(EXIT_USER_ERROR)
            _report(ctx, exc, f"internal error: {type(exc).__name__}: {exc}. Re-run with --debug for the traceback.")
            ctx.exit(EXIT_INTERNAL_ERROR)


def _missing_extra(ctx: click.Context, exc: Exception):
    """The one-line error naming the extra to install, when ``exc`` is the import of a package of an extra that is
    not installed (:func:`ragassay.cli.extras.missing_extra`); None for any other exception."""
    if not isinstance(exc, ImportError):
        return None
    from .extras import missing_extra

    return missing_extra(exc, f"ragassay {ctx.invoked_subcommand or ''}".strip())


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
@click.version_option(None, "-V", "--version", package_name="ragassay", prog_name="ragassay")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """ragassay: how good is your RAG system, which module is to blame, and which configuration wins."""
    ctx.meta["ragassay.debug"] = debug


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (``ragassay``, ``python -m ragassay``): the command runs under the process policy
    of :mod:`ragassay.cli.process` (plugins imported when first needed; the process ended without the
    interpreter's teardown where that is safe)."""
    from . import process

    process.start()
    try:
        cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="ragassay")
    except SystemExit as exc:
        process.end(exc)  # returns when the process must exit the ordinary way
        raise
