"""A parameter dataclass field that is also a command-line option: :func:`option` puts the
option's flags, help, environment variable, click kind and its one check in the field's
metadata, so that the click command and the Python API function are both made from the
dataclass (:mod:`qar_sql.command`) and nothing restates a field.

Also the options several commands share, each a field factory written once (:func:`columns`,
:func:`p`, :func:`jobs`, ...), and the source options (:class:`SourceOptions`). Ground floor:
no click here (the kinds are words the CLI builder turns into click types)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qar_sql import rules
from qar_sql.errors import ParameterError, shown
from qar_sql.parameters.needs import Needs

#: The key of the option metadata in a field's ``metadata``.
KEY = "qar_option"


@dataclass(frozen=True)
class Option:
    """How a field reads on the command line. ``flags``: click's declarations (``("-p",
    "--p")``; the field's name is added when it differs from the long flag's); ``kind``: ``int``,
    ``float``, ``str``, ``flag`` (on/off), ``off`` (a flag that turns the field off: ``--no-risk``
    sets ``risk`` False), ``names`` (comma-separated, repeatable: a tuple),
    ``shares`` (comma-separated numbers), ``words`` (comma-separated in one option, the
    default shown joined: the field reads the text), ``path`` (a file), ``dir`` (a directory),
    ``dialect`` (an SQL dialect's name), ``choice`` (of ``choices``);
    ``minimum``/``maximum`` bound a number (click checks them and ``choices`` on the command
    line, :func:`check_value` for the Python API and a qar.toml); ``multiple``: repeatable;
    ``envvar``: a variable other than the QAR_<long flag> rule's; ``check``: the field's one
    check where the metadata cannot say it (raises a ParameterError naming the value), run by
    :func:`check_value` in its place when the parameters are made; ``cli``: False for a keyword of the Python API only; ``parse``: what the command
    line's text becomes (``--hierarchy age=age.csv`` → ("age", "age.csv")), a ParameterError
    naming a value it cannot read; ``flag_value``: the value of the option given alone
    (``--store`` alone: ""); ``required``: the command line refuses to run without it;
    ``metavar``: the value's name in ``--help`` (``--to VERSION``); ``only``: the options without
    which (or beside which) it would be ignored, an error (:mod:`qar_sql.parameters.needs`);
    ``none``: None is a value of a field whose default is not (``top=None``: every record)."""

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
    flag_value: Any = None
    parse: Callable[[Any], Any] | None = None
    required: bool = False
    metavar: str | None = None
    only: Needs | None = None
    none: bool = False


def option(default: Any = None, *, help: str, **meta: Any) -> Any:
    """A dataclass field with default ``default`` (``dataclasses.MISSING``: none, a required
    option) that is the option :class:`Option` (``meta``) describes."""
    return dataclasses.field(default=default, metadata={KEY: Option(help=help, **meta)})


def meta_of(field: dataclasses.Field) -> Option | None:
    """The option metadata of ``field``, or None for a field that is no option."""
    return field.metadata.get(KEY)


def options_of(cls: Any) -> list[tuple[dataclasses.Field, Option]]:
    """Every field of the dataclass ``cls`` that is an option, in field order, with its metadata."""
    return [(f, f.metadata[KEY]) for f in dataclasses.fields(cls) if KEY in f.metadata]


def flag_of(f: dataclasses.Field, meta: Option) -> str:
    """How a message names the option of ``f``: its long flag (``--k``), or a keyword of the
    Python API only as its caller writes it (``batch_rows =``)."""
    return next((d.split("/")[0] for d in meta.flags if d.startswith("--")), f"{f.name} =")


def check_value(f: dataclasses.Field, meta: Option, value: Any) -> None:
    """The one check of the option field ``f``: its own ``check`` if it has one, else what its
    metadata declares (a choice of ``choices``, a whole number or a number within ``minimum`` and
    ``maximum``), which click's types check on the command line; None skipped where it is the
    default ("not given") or declared a value (``none``). A ParameterError names the option's flag
    and the value."""
    if meta.multiple or (value is None and (f.default is None or meta.none)):
        return
    if meta.check is not None:
        try:
            meta.check(value)
            return
        except TypeError:  # (text compared with a number: said below)
            if meta.kind not in ("int", "float"):
                raise
    flag = flag_of(f, meta)
    if meta.kind == "choice":
        rules.check_choice(flag, value, meta.choices)
    if meta.kind not in ("int", "float"):
        return
    whole = meta.kind == "int"
    low = -math.inf if meta.minimum is None else meta.minimum
    high = math.inf if meta.maximum is None else meta.maximum
    kind = "a whole number" if whole else "a number"
    if meta.minimum is not None and meta.maximum is not None:
        kind += f" from {low:g} to {high:g}"
    elif meta.minimum is not None or meta.maximum is not None:
        kind += f" of at least {low:g}" if meta.minimum is not None else f" of at most {high:g}"
    typed = not isinstance(value, bool) and isinstance(value, numbers.Integral if whole else numbers.Real)
    if not typed or not low <= float(value) <= high:  # (NaN is within no bounds)
        # the example: a whole float's whole number (k=5.0: 5), else the default, else the minimum
        whole_float = whole and isinstance(value, float) and value.is_integer()
        fitting = (
            x
            for x in (int(value) if whole_float else None, f.default, meta.minimum, 1)
            if isinstance(x, int | float) and not isinstance(x, bool) and low <= x <= high
        )
        example = next(fitting, 1)
        if isinstance(value, str):  # (a quoted number, or YAML's 1e-3, which YAML reads as text)
            raise rules.text_error(flag, value, f"pass a number such as {example:g}.")
        raise ParameterError(f"{flag} {shown(value)} is not {kind}; pass one such as {example:g}.")


def check_numbers(cls: Any, values: Mapping[str, Any]) -> None:
    """Every keyword of the dataclass ``cls`` in ``values`` by :func:`check_value`, before the
    parameters are made (the Python API's; the command line's types check it while parsing)."""
    for f, meta in options_of(cls):
        if f.name in values:
            check_value(f, meta, values[f.name])


def check_fields(obj: Any) -> None:
    """Every option field of ``obj`` (a dataclass instance) by :func:`check_value`, in field order."""
    for f, meta in options_of(type(obj)):
        check_value(f, meta, getattr(obj, f.name))


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


def p() -> Any:
    return option(3, help="Quasi-identifier size: the number of columns per QI.", flags=("-p", "--p"), kind="int")


def alpha() -> Any:
    return option(0.01, help="Tail probability of the risk T̂(p, α).", flags=("--alpha",), kind="float")


def pi_u() -> Any:
    return option(
        0.05,
        help="Share of QIs above the threshold u (the tail fitted by the GPD).",
        flags=("--pi-u",),
        kind="float",
    )


def pwm() -> Any:
    return option(
        "plotting",
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
        # (typed on a DuckDB file or frame, chdb or Spark: refused, since they run one statement at a time)
        only=Needs(concurrent=True),
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


# --- qar risk and qar uniqueness (and the other commands with these options) -----------------------


#: The two conventions for a NULL key value (``--missing``).
MISSING = ("value", "wildcard")


def missing() -> Any:
    return option(
        "value",
        help="A NULL key value: a value of its own (value, as GROUP BY) or a match for any value (wildcard, as sdcMicro).",
        flags=("--missing",),
        kind="choice",
        choices=MISSING,
    )


def sampling_fraction() -> Any:
    return option(
        None,
        help="Share of the population the table holds, in (0, 1]: population models and DIS-SUDA.",
        flags=("--sampling-fraction",),
        kind="float",
        check=rules.check_sampling_fraction,
    )


def population() -> Any:
    return option(
        None,
        help="Population size (at least the number of rows), instead of --sampling-fraction.",
        flags=("--population",),
        kind="int",
        check=rules.check_population,
    )


# --- compare and report -----------------------------------------------------------------------------


def source_option(name: str) -> Any:
    """The field of the source option ``name`` (:class:`SourceOptions`) in a command's own
    parameters (``qar compare`` opens its two sides itself)."""
    f = SourceOptions.__dataclass_fields__[name]
    return dataclasses.field(default=f.default, metadata=f.metadata)


def key(only: Needs | None = None) -> Any:
    return option(
        None,
        help="Record key column(s), unique and non-NULL (files default to the row number).",
        flags=("--key", "-k"),
        kind="names",
        only=only,
    )


def hash_secret_file(purpose: str) -> Any:
    return option(
        None,
        help=f"File holding the secret {purpose}.",
        flags=("--hash-secret-file",),
        kind="path",
        envvar="QAR_HASH_SECRET_FILE",
    )


#: What each command does with its --store: a sentence of its own after the shared one (the help
#: of every --store once said "An audit records its run only when --store is given", of qar report,
#: qar history and qar migrate too, which record no run).
STORE_USE = {
    "audit": "Records this audit's run there; without --store nothing is recorded.",
    "records": "Records the exact contributions of this run there; without --store nothing is recorded.",
    "report": "Adds the history section: T̂ over the past runs of this table in that store (read, not written).",
    "scan": "Records every scan's run there (given alone: the config's [store] first); without it, runs are "
    "recorded only where qar.toml has a [store] (--no-store: never).",
    "history": "The store whose runs are shown (left out: the default store as when given alone).",
    "migrate": "The store to migrate (left out: the default store as when given alone).",
}


def store_help(command: str) -> str:
    """--store's help in ``command``: the one wording of where a store is, then :data:`STORE_USE`'s
    sentence. (``cli_options.store`` and :func:`store` both take it from here.)"""
    return (
        "Results store: a .duckdb file or a database URL (given alone: $QAR_STORE, else qar_results.duckdb). "
        + STORE_USE[command]
    )


def store(command: str) -> Any:
    """--store: a results store, the default one when given alone ("")."""
    return option(None, help=store_help(command), flags=("--store",), flag_value="")


def k() -> Any:
    return option(
        5,
        help="k for the k-anonymity summary (records in classes smaller than k).",
        flags=("--k",),
        kind="int",
        minimum=2,
    )


def group_size(default: Any, help: str) -> Any:
    """--group-size, k people: at least 2 (:func:`qar_sql.rules.check_group_size`, the one rule)."""
    return option(default, help=help, flags=("--group-size", "-g"), kind="int", check=rules.check_group_size)


def interval_level(none: bool = False) -> Any:
    return option(
        rules.DEFAULT_LEVEL,
        none=none,
        help="Nominal level of the tail-fit bands of T̂, u, ξ and β (bootstrap quantiles; not a confidence level).",
        flags=("--interval-level",),
        kind="float",
        check=rules.check_level,
    )


def bootstrap(none: bool = False) -> Any:
    return option(
        rules.DEFAULT_RESAMPLES,
        none=none,
        help="Bootstrap resamples for the tail-fit bands (seeded: the same data give the same band); 0 for none.",
        flags=("--bootstrap",),
        kind="int",
        check=rules.check_resamples,
    )


def as_keywords(message: str, classes: Sequence[Any]) -> str:
    """``message`` with each command-line flag of the dataclasses ``classes`` (and the value after
    it) written as the keyword a Python caller passes: ``--exclude 'id'`` → ``exclude='id'``,
    ``-p 1`` → ``p=1``. The checks deep in the audit name flags, as the CLI's user reads them."""
    import re

    keyword = {
        flag: (f.name, meta.kind, tuple(meta.choices or ()))
        for cls in classes
        for f, meta in options_of(cls)
        for flag in meta.flags
    }
    if not keyword:
        return message
    flags = "|".join(re.escape(flag) for flag in sorted(keyword, key=len, reverse=True))
    # a flag alone (not inside a word), then perhaps its value: a quoted name, a number, a
    # comma-separated list (a,b,c), a name=PLACEHOLDER (age=FILE), a snake_case name, a placeholder (COLUMN, COLUMN=FILE) or one of a choice's words; another
    # plain word after a flag is the sentence's ("use --columns to name ...")
    pattern = re.compile(
        rf"(?<![\w-])({flags})(?![\w-])"
        r"(?: ('(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?(?!\w|\.\d)|(?:True|False|None)\b|\w+(?:,\w+)+(?![\w,])"
        r"|\w+=[A-Z]{2}[A-Z_]*(?![\w=])|\w*_\w*|[A-Z]{2}[A-Z_]*(?:=[A-Z]{2}[A-Z_]*)?(?![\w=])"
        r"|[a-z][\w-]*))?"
    )

    def written(m: re.Match[str]) -> str:
        name, kind, choices = keyword[m.group(1)]
        value = m.group(2)
        if kind in ("flag", "off"):  # (an on/off flag takes no value: what follows is the sentence's)
            return f"{name}={kind == 'flag'}" + ("" if value is None else f" {value}")
        if value is not None and not value.startswith("'") and ("," in value or "=" in value):
            return f"{name}={value!r}"  # (a list as one text, a COLUMN=FILE: one value, quoted)
        if value is not None and value[:1].islower() and "_" not in value and value not in choices:
            return f"{name}= {value}"  # (the sentence's word)
        if value is None:
            return f"{name}="
        if value in ("True", "False", "None"):  # (a Python constant the caller passed, as written)
            return f"{name}={value}"
        if not value.startswith("'") and not value.lstrip("-")[:1].isdigit():  # (a snake_case name)
            value = repr(value)
        return f"{name}={value}"  # (one name is a list of one to every keyword of names)

    return pattern.sub(written, message)
