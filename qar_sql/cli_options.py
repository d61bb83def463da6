"""Click options shared by every command, defined once. Each gets its ``QAR_<OPTION>`` variable from
:func:`add_envvars` (one rule, not a name written beside every option)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from qar_sql.output.render import format_option
from qar_sql.parameters.fields import store_help


def split_names(ctx: click.Context, param: click.Parameter, value: Any) -> tuple[str, ...] | None:
    """``--columns a,b --columns c`` → ("a", "b", "c"); order kept. An option given with no
    name in it (``-c ''``, ``-c ',,,'``) is refused: taken as "not given", it would silently
    mean all columns."""
    if not value:
        return None
    out: list[str] = []
    for item in value:
        out += [part.strip() for part in item.split(",") if part.strip()]
    if not out:
        raise click.BadParameter(
            f"{', '.join(repr(v) for v in value)} names no column; write e.g. {param.opts[0]} age,sex, or leave "
            f"{param.opts[0]} out",
            ctx=ctx,
            param=param,
        )
    return tuple(out)


def split_shares(ctx: click.Context | None, param: click.Parameter | None, value: str | None) -> tuple[float, ...]:
    """``--row-subsamples 0.25,0.5`` as numbers; a word that is not one is click's usage error."""
    if not value:
        return ()
    out = []
    for word in value.split(","):
        try:
            out.append(float(word))
        except ValueError:
            raise click.BadParameter(f"{word.strip()!r} is not a share of the rows; use e.g. 0.25,0.5") from None
    return tuple(out)


def file_option(*decls: str, help: str, **attrs: Any) -> Callable:
    """A file path (not a directory); ``attrs`` are any other ``click.option`` keywords."""
    return click.option(*decls, type=click.Path(dir_okay=False), help=help, **attrs)


fmt = format_option()
#: --format for the commands that also write the HTML report (docs/report.md) to stdout.
fmt_html = format_option(html=True, help="Output format; html is the self-contained report (docs/report.md).")
quiet = click.option(
    "--quiet", "-q", is_flag=True, help="No progress on stderr (a bar on a terminal, else a stage line every 10 s)."
)
#: What click gives an option whose value may be left out (``--store`` alone), so that it is told
#: apart from an empty text (``--store ""``, ``--store "$UNSET"``), which read the same and wrote
#: the default store in the current folder.
ALONE = "\x00given alone"


def alone(meaning: Any) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """The callback of a store option (``--store``, ``--from-store``) with ``flag_value=ALONE``:
    given alone, ``meaning``; an empty text is refused."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value == ALONE:
            # The store of the config found in the working folder ([tool.qar] store, a qar.toml's
            # [store] url) is the one a run records in without --store: --store alone means it
            # too (it meant qar_results.duckdb), below $QAR_STORE as a config is below its variable.
            configured = ctx.lookup_default(param.name or "", call=False)
            if isinstance(configured, str) and configured and not os.environ.get("QAR_STORE"):
                return configured
            return meaning
        if isinstance(value, str) and not value.strip():
            flag = next(o for o in param.opts if o.startswith("--"))
            raise click.BadParameter(
                f"{value!r} is empty; name a .duckdb file or a database URL, or give {flag} alone (no value) for "
                "$QAR_STORE, else qar_results.duckdb",
                ctx,
                param,
            )
        return value

    return callback


def store(command: str) -> Callable:
    """``--store`` of ``command`` (its help: :func:`qar_sql.parameters.fields.store_help`). Given
    alone it means the default store ($QAR_STORE, else qar_results.duckdb): "" to the command."""
    return click.option(
        "--store", is_flag=False, flag_value=ALONE, callback=alone(""), default=None, help=store_help(command)
    )


store_in_source = click.option(
    "--store-in-source",
    is_flag=True,
    help="Allow --store to be the audited DuckDB file itself (refused otherwise: audits never write to what they audit).",
)


def top(default: int, help: str, minimum: int = 1) -> Callable:
    """--top: how many rows (QIs, records, combinations) a command lists; what they are is the
    command's own ``help``."""
    return click.option("--top", type=click.IntRange(minimum, None), default=default, help=help)


#: Options without a QAR_<OPTION> variable of their own: --store's QAR_STORE names the store
#: that ``--store`` alone (and migrate, scan, history) uses; it does not switch recording on.
NO_ENVVAR = frozenset({"store", "version", "help"})


def envvar_of(option: click.Option) -> str:
    """QAR_ and the long flag: --format → QAR_FORMAT, --pi-u → QAR_PI_U."""
    flags = [o for o in (*option.opts, *option.secondary_opts) if o.startswith("--")]
    name = flags[0][2:] if flags else (option.name or "")
    return "QAR_" + name.upper().replace("-", "_")


def add_envvars(group: click.Group) -> None:
    """Give every option of ``group`` and its commands a ``QAR_<OPTION>`` variable where it has
    none (an existing name such as QAR_DATABASE_URL is kept), and show it in ``--help``.

    Done by walking the commands rather than by click's ``auto_envvar_prefix`` alone, which
    would name them QAR_<COMMAND>_<OPTION>; one name per option is what users set in CI."""

    def walk(command: click.Command) -> None:
        for param in command.params:
            # (A hidden option is a deprecated spelling, read from the command line only.)
            if isinstance(param, click.Option) and param.name and param.name not in NO_ENVVAR and not param.hidden:
                if param.envvar is None:
                    param.envvar = envvar_of(param)
                param.show_envvar = True
        if isinstance(command, click.Group):
            for sub in command.commands.values():
                walk(sub)

    walk(group)
