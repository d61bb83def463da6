"""The ``qar`` command: parse options, call one library function, print, exit.

Exit codes are :class:`qar_sql.errors.ExitCode`. Errors print one sentence; ``--debug`` shows
the traceback.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

import click

from qar_sql import cli_options
from qar_sql.engines.drivers import version_lines
from qar_sql.engines.secrets import scrub, secret_values
from qar_sql.errors import ExitCode, QarError
from qar_sql.user_text import terminal, traceback_text


def _known_secrets() -> list[str]:
    """The secrets of any URL or keyword string on the command line or in a ``QAR_*`` variable."""
    return [
        v
        for arg in [*sys.argv[1:], *(v for k, v in os.environ.items() if k.startswith("QAR_"))]
        for v in secret_values(arg)
    ]


def _safe(exc: BaseException) -> str:
    """The message as the terminal shows it (:func:`qar_sql.user_text.terminal`), every secret masked: those of any URL or keyword string on the command
    line or in a ``QAR_*`` variable (a driver may echo them), and every URL's password."""
    return terminal(scrub(str(exc), _known_secrets()))


def _traceback(exc: BaseException) -> str:
    """``--debug``'s traceback, as the terminal shows it and masked as :func:`_safe` masks."""
    return scrub(traceback_text(exc), _known_secrets())


def _from_echo(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while click.echo wrote (stdout, where qar prints everything)."""
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "echo" and "click" in code.co_filename:
            return True
        tb = tb.tb_next
    return False


def _stdout_failed(exc: OSError) -> NoReturn:
    """stdout cannot be written (``qar … > /dev/full``, a disk full): one sentence, exit 3. Later
    writes go to devnull so that the interpreter's final flush does not fail again."""
    click.echo(
        f"Error: cannot write to standard output ({exc.strerror or exc}); free space where it goes or send it elsewhere",
        err=True,
    )
    _silence_stdout()
    sys.exit(int(ExitCode.RUNTIME))


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (a test runner's buffer)
        pass


class QarGroup(click.Group):
    """Turns library errors into one-line messages and documented exit codes."""

    def main(self, *args, **kwargs):
        # --version and --help print while the options are parsed, before invoke().
        try:
            return super().main(*args, **kwargs)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError) or not _from_echo(exc):
                raise
            _stdout_failed(exc)

    def make_context(self, *args, **kwargs):
        # Ctrl-C while the options are parsed (a callback such as --version's imports the
        # drivers): click would say "Aborted!" and exit 1, the code of a risk above a threshold.
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            raise click.exceptions.Exit(int(ExitCode.INTERRUPTED)) from None

    def parse_args(self, ctx, args):
        # --debug is accepted anywhere before "--" (qar audit x.csv --debug), not only before
        # the command: it is moved in front, where the group parses it.
        cut = args.index("--") if "--" in args else len(args)
        if "--debug" in args[:cut]:
            args = ["--debug"] + [a for i, a in enumerate(args) if not (i < cut and a == "--debug")]
        return super().parse_args(ctx, args)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except QarError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                click.echo(_traceback(exc), err=True, nl=False)
            click.echo(f"Error: {_safe(exc)}", err=True)
            ctx.exit(int(exc.exit_code))
        except KeyboardInterrupt:
            click.echo("Interrupted.", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:
            # The reader went away (`qar config | head`): what it wanted it got. Stop quietly, as
            # Unix tools do, and point stdout at devnull so the interpreter's final flush of the
            # buffered rest does not raise again on exit.
            _silence_stdout()
            ctx.exit(0)
        except Exception as exc:  # a bug or an unexpected driver error: still one line
            if isinstance(exc, OSError) and _from_echo(exc):
                _stdout_failed(exc)
            from qar_sql.engines.source import is_interrupt

            if is_interrupt(exc):  # Ctrl-C inside a DuckDB call outside qar's own wrappers
                click.echo("Interrupted.", err=True)
                ctx.exit(int(ExitCode.INTERRUPTED))
            if ctx.obj and ctx.obj.get("debug"):
                click.echo(_traceback(exc), err=True, nl=False)
            click.echo(
                f"Error: unexpected {type(exc).__name__}: {_safe(exc)} (run with --debug for details)",
                err=True,
            )
            ctx.exit(int(ExitCode.RUNTIME))


#: The levels of --log-level (before or after the command).
LOG_LEVELS = click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False)


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return

    click.echo("\n".join(version_lines()))
    ctx.exit()


# Every option shows its default in --help (inherited by the subcommands' contexts).
@click.group(cls=QarGroup, context_settings={"help_option_names": ["-h", "--help"], "show_default": True})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the versions of qar, Python, DuckDB, SQLAlchemy and each installed extra (for a bug report), and exit.",
)
@click.option("--debug", is_flag=True, envvar="QAR_DEBUG", help="Show tracebacks on errors.")
@cli_options.file_option(
    "--config",
    "config_path",
    envvar="QAR_CONFIG",  # config.CONFIG_ENV; config (and the scan code it loads) is imported when run, not for --help
    help="Defaults from this qar.toml or pyproject.toml (default: found in the working directory or a parent).",
)
@click.option(
    "--log-level",
    type=LOG_LEVELS,
    help="Log level of the qar_sql logger on stderr (DEBUG: every SQL statement and its time); before or after "
    "the command.",
)
@click.option(
    "--verbose",
    "-v",
    count=True,
    help="More log output on stderr: -v INFO, -vv DEBUG (SQL statements); before or after the command.",
)
@click.pass_context
def cli(ctx, debug, config_path, log_level, verbose):
    """qar-sql: how easily can the people in a table be re-identified?

    Exit codes: 0 ok, 1 risk above --fail-above, 2 usage error (bad option, file, table,
    column, parameter, or data that cannot support an estimate), 3 database or runtime error,
    130 interrupted (Ctrl-C).
    """
    ctx.ensure_object(dict)["debug"] = debug
    _log_to_stderr(_level(log_level, verbose))
    # Defaults from qar.toml / [tool.qar], below the command line and the QAR_ variables.
    from qar_sql import config_file as qar_config

    try:
        found = qar_config.load(config_path) if config_path else qar_config.find()
    except QarError as exc:
        if ctx.invoked_subcommand != "config":
            click.echo(f"Error: {_safe(exc)}", err=True)
            ctx.exit(int(exc.exit_code))
        # qar config says it (without --check), or --check FILE lists every error of its file:
        # a broken qar.toml in the working directory stopped the check of any file at its first.
        ctx.obj["config_error"], found = exc, qar_config.Config({})
    ctx.obj["config"] = found
    ctx.default_map = qar_config.default_map(found, ctx.command.commands)


def _level(log_level: str | None, verbose: int) -> str | None:
    """--log-level wins over -v/-vv (whatever their order)."""
    return log_level or ("DEBUG" if verbose >= 2 else "INFO" if verbose == 1 else None)


def _log_after_command(ctx: click.Context, param: click.Parameter, value) -> None:
    """-v and --log-level given after the command: the same setup as before it, once both are
    parsed (click calls this for each; the command's own values are kept in ``ctx.meta``)."""
    given = ctx.meta.setdefault("qar_log", {"log_level": None, "verbose": 0})
    if value:
        given[param.name] = value
    _log_to_stderr(_level(given["log_level"], given["verbose"]))


def add_log_options(group: click.Group) -> None:
    """Accept --log-level and -v/--verbose after every command too (``qar audit x.csv -v``), as
    --debug is. Hidden there: the group's --help documents them once."""
    hidden: dict = {"expose_value": False, "hidden": True, "callback": _log_after_command}
    for command in group.commands.values():
        command.params += [
            click.Option(["--log-level"], type=LOG_LEVELS, help="As qar --log-level.", **hidden),
            click.Option(["--verbose", "-v"], count=True, help="As qar -v.", **hidden),
        ]


class _TerminalFormatter(logging.Formatter):
    """A log record as the terminal shows it (:func:`qar_sql.user_text.terminal`): it quotes
    tables, files and SQL, which hold the user's names."""

    def format(self, record: logging.LogRecord) -> str:
        return terminal(super().format(record))


def _log_to_stderr(level: str | None) -> None:
    """One stderr handler on the ``qar_sql`` logger (library code only logs, never prints)."""
    if level is None:
        return
    logger = logging.getLogger("qar_sql")
    logger.setLevel(level.upper())
    ours = [h for h in logger.handlers if getattr(h, "_qar", False)]
    if ours:
        ours[0].setStream(sys.stderr)  # type: ignore[attr-defined]  # (the current stderr)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_TerminalFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._qar = True  # type: ignore[attr-defined]
    logger.addHandler(handler)


from qar_sql.command import cli_command  # noqa: E402
from qar_sql.commands import (  # noqa: E402
    anonymize,
    audit,
    demo,
    discover,
    eliminate,
    history,
    migrate,
    records,
    release,
    risk,
    scan,
    settings,
    sql,
    uniqueness,
    whatif,
)

for _command in (
    audit.COMMAND, sql.COMMAND, demo.COMMAND, records.COMMAND, eliminate.COMMAND, risk.COMMAND,
    discover.COMMAND, whatif.COMMAND, anonymize.COMMAND, release.REPORT, release.COMPARE,
    uniqueness.COMMAND, history.COMMAND, migrate.COMMAND, scan.COMMAND, settings.COMMAND,
):  # fmt: skip
    cli.add_command(cli_command(_command))

# -v and --log-level after the command too; not their variables (the group reads those).
add_log_options(cli)

# Every option has a QAR_<OPTION> variable, shown in --help (after every command is registered).
cli_options.add_envvars(cli)

from qar_sql.cli.examples import add_examples  # noqa: E402

add_examples(cli)  # `qar <command> --help` ends with examples


def main() -> None:
    cli(prog_name="qar", auto_envvar_prefix="QAR")


if __name__ == "__main__":  # pragma: no cover
    main()
