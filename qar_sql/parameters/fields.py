"""A parameter dataclass field that is also a command-line option: :func:`option` puts the
option's flags, help, environment variable, click kind and its one check in the field's
metadata, so that the click command and the Python API function are both made from the
dataclass (:mod:`qar_sql.command`) and nothing restates a field.

Also the options several commands share, each a field factory written once (:func:`columns`,
:func:`p`, :func:`jobs`, ...), and the source options (:class:`SourceOptions`). Ground floor:
no click here (the kinds are words the CLI builder turns into click types)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules

#: The key of the option metadata in a field's ``metadata``.
KEY = "qar_option"


@dataclass(frozen=True)
class Option:
    """How a field reads on the command line. ``flags``: click's declarations (``("-p",
    "--p")``; the field's name is added when it differs from the long flag's); ``kind``: ``int``,
    ``float``, ``str``, ``flag`` (on/off), ``names`` (comma-separated, repeatable: a tuple),
    ``shares`` (comma-separated numbers), ``path`` (a file), ``dir`` (a directory), ``dialect`` (an
    SQL dialect's name), ``choice`` (of ``choices``);
    ``minimum``/``maximum`` bound a number; ``multiple``: repeatable; ``envvar``: a variable
    other than the QAR_<long flag> rule's; ``check``: the field's one check (raises a
    ParameterError naming the value), run by :func:`check_fields` and by the command line while
    it parses; ``cli``: False for a keyword of the Python API only; ``parse``: what the command
    line's text becomes (``--hierarchy age=age.csv`` → ("age", "age.csv")), a ParameterError
    naming a value it cannot read; ``required``: the command line refuses to run without it."""

    help: str
    flags: tuple[str, ...] = ()
    kind: str = "str"
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    multiple: bool = False
    envvar: str | None = None
    hidden: bool = False
    check: Callable[[Any], Any] | None = None
    cli: bool = True
    parse: Callable[[Any], Any] | None = None
    required: bool = False


def option(default: Any = None, *, help: str, **meta: Any) -> Any:
    """A dataclass field with default ``default`` that is the option :class:`Option` (``meta``)
    describes."""
    return dataclasses.field(default=default, metadata={KEY: Option(help=help, **meta)})


def meta_of(field: dataclasses.Field) -> Option | None:
    """The option metadata of ``field``, or None for a field that is no option."""
    return field.metadata.get(KEY)


def options_of(cls: Any) -> list[tuple[dataclasses.Field, Option]]:
    """Every field of the dataclass ``cls`` that is an option, in field order, with its metadata."""
    out = []
    for f in dataclasses.fields(cls):
        meta = meta_of(f)
        if meta is not None:
            out.append((f, meta))
    return out


def check_fields(obj: Any) -> None:
    """Run the ``check`` of every option field of ``obj`` (a dataclass instance), in field order."""
    for f, meta in options_of(type(obj)):
        if meta.check is not None:
            meta.check(getattr(obj, f.name))


# --- options several commands share -----------------------------------------------------------------


def columns(
    help: str = "Quasi-identifier columns, comma-separated, exact names, order kept (default: all columns).",
) -> Any:
    return option(None, help=help, flags=("--columns", "-c"), kind="names")


def exclude() -> Any:
    return option(
        None,
        help="Columns to leave out (e.g. an id): from all columns, or from those of --columns.",
        flags=("--exclude", "-x"),
        kind="names",
    )


def p(default: int = 3) -> Any:
    return option(default, help="Quasi-identifier size: the number of columns per QI.", flags=("-p", "--p"), kind="int")


def alpha(default: float = 0.01) -> Any:
    return option(default, help="Tail probability of the risk T̂(p, α).", flags=("--alpha",), kind="float")


def pi_u(default: float = 0.05) -> Any:
    return option(
        default,
        help="Share of QIs above the threshold u (the tail fitted by the GPD).",
        flags=("--pi-u",),
        kind="float",
    )


def pwm(default: str = "plotting") -> Any:
    return option(
        default,
        help="PWM estimator: plotting positions (as R's evir/fExtremes) or unbiased.",
        flags=("--pwm",),
        kind="choice",
        choices=rules.PWM_METHODS,
    )


def jobs() -> Any:
    return option(
        rules.DEFAULT_JOBS,
        help="Concurrent connections for server databases.",
        flags=("--jobs", "-j"),
        kind="int",
        minimum=1,
        maximum=64,
    )


def batch_size() -> Any:
    return option(
        None,
        help="Quasi-identifiers per SQL statement (default: chosen per engine).",
        flags=("--batch-size",),
        kind="int",
        minimum=1,
        maximum=100000,
    )


# --- where the data is ------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SourceOptions:
    """Where the data is and how a file is read: the session's options, not a command's
    parameters. ``source`` is the positional SOURCE (a file, a database URL, an open
    :class:`~qar_sql.engines.session.Session` or a data frame; default ``$QAR_DATABASE_URL``)."""

    source: Any = option(None, help="A CSV/Parquet/DuckDB file, a SQLAlchemy URL or an open Source.", cli=False)
    table: str | None = option(
        None,
        help="Table to audit (schema.table allowed) in a DuckDB file or database URL.",
        flags=("--table", "-t"),
    )
    delimiter: str | None = option(
        None, help="CSV delimiter (detected by default), e.g. ';' or '\\t'.", flags=("--delimiter",)
    )
    null_tokens: Sequence[str] = option(
        (),
        help="A CSV cell text read as NULL besides the empty cell, e.g. NA (repeatable).",
        flags=("--null-token",),
        multiple=True,
        envvar="QAR_NULL_TOKEN",
    )
    all_text: bool = option(
        False,
        help="Read every CSV column as text (DuckDB otherwise infers numbers and dates, so 1.0 and 1 become one value).",
        flags=("--all-text",),
        kind="flag",
    )
    threads: int | None = option(None, help="DuckDB threads (default: DuckDB's).", cli=False)
