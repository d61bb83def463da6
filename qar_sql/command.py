"""A command is one object: :class:`Command` names its parameter dataclass (whose fields carry
their options, :mod:`qar_sql.parameters.fields`), its ``run(session, params, progress)``, its
``verdict(result, params)`` (the exit code) and the source and output options it takes.
:func:`cli_command` makes the click command and :func:`api_function` the Python API function
from it, so neither restates a field, and both go through ``run``.

    COMMAND = Command(name="audit", Params=AuditParams, run=run, help=..., order=(...))
    audit = api_function(COMMAND)          # qar_sql.audit(source, *, columns=..., p=3, ...)
    cli.add_command(cli_command(COMMAND))  # qar audit SOURCE -c ... -p 3 ...
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import click

from qar_sql.cli_options import ALONE, alone, split_names, split_shares
from qar_sql.engines.dialects import DIALECTS
from qar_sql.errors import ParameterError, QarError
from qar_sql.extras import require
from qar_sql.guard import guard_outputs
from qar_sql.output.render import render
from qar_sql.parameters.fields import Option as OptionMeta
from qar_sql.parameters.fields import SourceOptions, as_keywords, check_numbers, meta_of, options_of
from qar_sql.parameters.needs import Needs, check_needs
from qar_sql.progress import Progress, with_progress
from qar_sql.user_text import for_format, not_utf8, terminal

P = TypeVar("P")
R = TypeVar("R")

#: The --help order of the options that open a table (after SOURCE) and of the tail's settings,
#: which most commands list first in that order.
SOURCE_ORDER = ("table", "columns", "exclude", "delimiter", "null_tokens")
TAIL_ORDER = ("p", "alpha", "pi_u", "pwm")

#: The source options every command reading a table takes (SOURCE and these), in --help order.
SOURCE = ("source", "table", "delimiter", "null_tokens", "all_text", "threads")


class Verdict(int):
    """An exit code with the sentence the command line prints on stderr for it."""

    reason: str

    def __new__(cls, code: int, reason: str = "") -> Verdict:
        self = super().__new__(cls, code)
        self.reason = reason
        return self


@dataclass(frozen=True)
class Extras:
    """What the command line gives a command's hooks besides its parameters: the source options
    (``where``), the output options (``out``: --format, --quiet, --top, ...) and the statements
    the run rendered (its session's :attr:`~qar_sql.engines.session.Session.sql_log`)."""

    where: dict[str, Any]
    out: dict[str, Any]
    sql: list[str] = field(default_factory=list)


def _ok(result: Any, params: Any) -> int:
    return 0


def lazy(load: Callable[[], Any], name: str) -> Callable[..., Any]:
    """The hook ``name`` of the module ``load()`` returns, looked up when called: a command's
    numpy-backed work stays unloaded while ``qar --help`` builds the command."""
    return lambda *args, **kwargs: getattr(load(), name)(*args, **kwargs)


@dataclass(frozen=True)
class Command(Generic[P, R]):
    """One command. ``help``: the text of ``qar NAME --help`` (and the API's docstring unless
    ``doc``); ``source``: the source options it takes (:data:`SOURCE`); ``outputs``: its
    command-line-only options, name → click option decorator (--format, --quiet, --top, ...);
    without ``"source"`` in ``source`` the command takes no SOURCE and ``run`` gets no session
    (None: the command opens its own files, as ``qar demo``);
    ``order``: every option's name in ``--help`` order (SOURCE is the argument, first).

    Hooks, each optional: ``prepare(params) → params`` (files read, plans made, before any
    connection); ``check(params, relation)``: what can be checked once the table's columns are
    known (its function in :mod:`qar_sql.commands.catalog_checks`), which :func:`run_on` runs
    when the session is open and before ``run`` reads a row: every input check comes before the
    first query that reads rows; ``preview(where, params, out) → text | None`` (text printed instead of a run,
    as ``qar audit --show-sql``); ``runner(where, params, progress, out) → result`` (a run other
    than ``run`` on a fresh session, as ``--store``'s recorded one); ``html(result, params,
    extras) → str`` (the HTML report); ``emits``: the output options the renderer takes
    (``"params"``: the parameters); ``session_params``: parameters the session opens with too
    (``qar records``' --all-text, a rule of its parameters);
    ``files(params, where, out) → (writes, reads)``: (option, path) of the files it writes and
    (what, path) of those it reads, as given (before ``prepare``), none of which may be another
    (the API's ``out`` is {}).

    For commands that read more than one source or write files of their own: ``arguments``: the
    positional arguments (the first reads $QAR_DATABASE_URL, unless its field is of kind ``path``: a
    file, as scan's CONFIG; a name other than ``source`` is a
    field, as compare's ORIGINAL and TREATED); ``api_arguments``: fields the Python API also takes
    positionally, after those (options on the command line: ``qar_sql.history(store)``); ``session(where, params) → keywords | None``: the
    session's keywords taken from the prepared parameters (None: no source is read);
    ``needs``: the optional extra required before any work; ``parse(values, where, out) →
    values`` (command line only, before the parameters are made): the fields that
    command-line-only options give (``--no-risk`` → ``risk``, a deprecated spelling read into
    its field);
    ``guard(where, params)``: no output over an input, before any file is read; ``write(result,
    params, extras)``: the files the result makes (after it is printed; the API's
    ``extras.out`` is {}, so a file only an output option asks for is the command line's; ``prints`` False: it is
    not printed, as the report it writes to -o); ``cli_keywords``: keywords only the command line
    gives ``run``; ``only``: the options that would be ignored without (or beside) others, by
    name, for the command-line-only options and the shared ones whose relation is this command's
    (a field's own is in its metadata: :meth:`relations` joins them); ``one_at_a_time(values)``:
    why the statements of a run with these values go one at a time, so that an option of
    ``Needs(concurrent=True)`` (``--jobs``) has no effect, or None (default: the engine of every
    source argument, :func:`serial_sources`)."""

    name: str
    Params: type[P]
    run: Callable[..., R]
    help: str
    order: tuple[str, ...]
    doc: str = ""
    source: tuple[str, ...] = SOURCE
    outputs: Mapping[str, Callable | click.Parameter] = field(default_factory=dict)
    emits: tuple[str, ...] = ()
    progress: str = "scanning"
    prepare: Callable[[P], P] | None = None
    check: Callable[[P, Any], Any] | None = None
    verdict: Callable[[R, P], int] = _ok
    preview: Callable[[dict, P, dict], str | None] | None = None
    runner: Callable[[dict, P, Any, dict], R] | None = None
    html: Callable[[R, P, Extras], str] | None = None
    files: Callable[[P, Mapping[str, Any], Mapping[str, Any]], tuple[list, list]] | None = None
    session_params: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ("source",)
    api_arguments: tuple[str, ...] = ()
    session: Callable[[dict, P], dict | None] | None = None
    needs: str | None = None
    parse: Callable[[dict, dict, dict], dict] | None = None
    guard: Callable[[dict, P], None] | None = None
    write: Callable[[R, P, Extras], None] | None = None
    prints: bool = True
    cli_keywords: Mapping[str, Any] = field(default_factory=dict)
    only: Mapping[str, Needs] = field(default_factory=dict)
    one_at_a_time: Callable[[Mapping[str, Any]], str | None] | None = None

    def require(self, spelled: str) -> None:
        """The optional extra the command needs, present (``spelled``: how the caller named it)."""
        if self.needs is not None:
            require(self.needs, spelled)

    def fields(self) -> dict[str, tuple[dataclasses.Field, OptionMeta]]:
        """Every option field, the parameters' then the source options', by name."""
        found = {f.name: (f, m) for f, m in options_of(self.Params)}
        found |= {f.name: (f, m) for f, m in options_of(SourceOptions) if f.name in self.source}
        return found

    def serial(self, values: Mapping[str, Any]) -> str | None:
        """Why the run of ``values`` goes one statement at a time (``one_at_a_time``), or None."""
        if self.one_at_a_time is not None:
            return self.one_at_a_time(values)
        return serial_sources(self, values)

    def relations(self) -> dict[str, Needs]:
        """Every option's :class:`~qar_sql.parameters.needs.Needs`, by name: the fields' own, then
        the command's (which replace a shared field's)."""
        found = {name: meta.only for name, (_, meta) in self.fields().items() if meta.only is not None}
        # (a command's relation of a shared field keeps the field's engines: whatif's --jobs is
        # unused with --emit-sql and still on a DuckDB file)
        own = {
            n: dataclasses.replace(r, concurrent=True) if n in found and found[n].concurrent else r
            for n, r in self.only.items()
        }
        return found | own


def _sources() -> Any:
    """:mod:`qar_sql.engines.source`, numpy-backed: loaded when a command runs, not by ``qar --help``."""
    from qar_sql.engines import source

    return source


#: The arguments that name a source (compare's TREATED: None is ORIGINAL's).
SOURCE_ARGUMENTS = ("source", "original", "treated")


def serial_sources(cmd: Command, values: Mapping[str, Any]) -> str | None:
    """Why every source the command reads runs its statements one at a time (the first's
    reason), or None: one of them is a server database, or the command reads none."""
    names = [n for n in cmd.arguments if n in SOURCE_ARGUMENTS]
    sources = [values.get(n) for i, n in enumerate(names) if i == 0 or values.get(n) is not None]
    reasons = [_sources().one_at_a_time(s) for s in sources]
    return reasons[0] if reasons and all(r is not None for r in reasons) else None


def run_on(
    where: Mapping[str, Any],
    cmd: Command[P, R],
    params: P,
    progress: Any,
    log: list[str] | None = None,
    **keywords: Any,
) -> R:
    """``cmd.run`` on the session of the source options ``where`` (or of ``cmd.session``), closed
    after; ``log`` gets the statements it rendered (:attr:`~qar_sql.engines.session.Session.sql_log`);
    ``keywords`` go to ``run``."""
    # (a command with no source, as demo, opens its own files)
    opened = cmd.session(dict(where), params) if cmd.session is not None else where if cmd.source else None
    if opened is None:
        return cmd.run(None, params, progress, **keywords)
    with _sources().session_of(**opened, **{name: getattr(params, name) for name in cmd.session_params}) as session:
        if cmd.check is not None:  # (the catalog only: opening the session read the columns)
            cmd.check(params, session.relation)
        if log is None:
            return cmd.run(session, params, progress, **keywords)
        start = len(session.sql_log)
        with session.logging_sql() as statements:
            result = cmd.run(session, params, progress, **keywords)
        log.extend(statements[start:])
        return result


def _prepared(cmd: Command[P, R], params: P, where: Mapping[str, Any], out: Mapping[str, Any]) -> P:
    """``params`` prepared, no output being a file it reads: what the command line and the API
    do before connecting."""
    if cmd.files is not None:
        guard_outputs(*cmd.files(params, where, out))  # (the command line's config file is read too)
    return cmd.prepare(params) if cmd.prepare is not None else params


# --- the command line ---------------------------------------------------------------------------


def _number(kind: type, meta: OptionMeta) -> Any:
    if meta.minimum is None and meta.maximum is None:
        return kind
    if kind is int:
        low, high = (None if b is None else int(b) for b in (meta.minimum, meta.maximum))
        return click.IntRange(low, high)
    return click.FloatRange(meta.minimum, meta.maximum)


def click_option(name: str, f: dataclasses.Field, meta: OptionMeta) -> click.Option:
    """The click option of the field ``f``: its flags, help, kind and default (the field's; a
    field without one is a required option); its check runs when the parameters are made."""
    decls = list(meta.flags)
    long = next(d for d in decls if d.startswith("--"))
    if long[2:].replace("-", "_") != name:
        decls.append(name)
    attrs: dict[str, Any] = {"help": meta.help, "hidden": meta.hidden, "envvar": meta.envvar, "metavar": meta.metavar}
    convert: Callable | None = None
    default = None if f.default is dataclasses.MISSING else f.default  # (required: the parameters say so)
    if meta.kind == "flag":
        attrs["is_flag"] = True
    elif meta.kind == "off":  # --no-risk gives risk=False (a QAR_NO_RISK=1 too)
        attrs["is_flag"], convert, default = True, lambda ctx, param, value: not value, False
    elif meta.kind == "names":
        attrs["multiple"], convert = True, split_names
    elif meta.kind == "shares":
        convert, default = split_shares, None
    elif meta.kind == "words":  # comma-separated in one option, the default shown as typed; the field reads the text
        default = ",".join(default or ())
    elif meta.kind == "choice":
        attrs["type"] = click.Choice(meta.choices)
    elif meta.kind == "path":
        attrs["type"] = click.Path(dir_okay=False)
    elif meta.kind == "dir":
        attrs["type"] = click.Path(file_okay=False)
    elif meta.kind == "dialect":
        attrs["type"] = click.Choice(sorted(DIALECTS))
    elif meta.kind in ("int", "float"):
        attrs["type"] = _number(int if meta.kind == "int" else float, meta)
    if meta.multiple:
        attrs["multiple"] = True
    if meta.parse is not None:
        convert = _parsing(meta.parse)
    if meta.flag_value is not None:  # (given alone: this value, as --store alone; an empty text refused)
        attrs["is_flag"], attrs["flag_value"], convert = False, ALONE, alone(meta.flag_value)
    if meta.required:  # (click's [required]; a default, even None, would count as given)
        attrs["required"] = True
    else:
        attrs["default"] = default
    return click.Option(decls, callback=convert, **attrs)


def _check_typed(cmd: Command, values: Mapping[str, Any]) -> None:
    """No option typed on the command line that its relations say would be ignored (a variable
    or a config file sets options for every command: only what is typed is refused)."""
    ctx = click.get_current_context()
    sources = {p.name: ctx.get_parameter_source(p.name) for p in ctx.command.params if p.name}
    flags = {  # (an on/off pair by both its flags: --monotonic/--no-monotonic)
        p.name: "/".join(
            next((o for o in opts if o.startswith("--")), opts[0]) for opts in (p.opts, p.secondary_opts) if opts
        )
        for p in ctx.command.params
        if isinstance(p, click.Option) and p.name
    }
    check_needs(
        cmd.relations(),
        typed=lambda n: sources.get(n) is click.core.ParameterSource.COMMANDLINE,
        given=lambda n: sources.get(n) not in (None, click.core.ParameterSource.DEFAULT),
        value=lambda n: values.get(n),
        flag=flags.get,
        one_at_a_time=lambda: cmd.serial(values),
    )


#: The source options only a CSV file reads (:func:`qar_sql.engines.source.check_csv_options`).
CSV_OPTIONS = ("delimiter", "null_tokens", "all_text")


def _csv_options_applied(
    cmd: Command, where: dict[str, Any], values: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``where`` and ``values`` without the CSV options a ``QAR_`` variable or a config file gave,
    where no source the command reads is a CSV file: they set options for every command (a
    ``[defaults] null_tokens`` for the CSV files), so only a typed one is refused there, as
    :func:`_check_typed`'s are (compare's are fields, read for ORIGINAL and TREATED)."""
    ctx = click.get_current_context()
    commandline = click.core.ParameterSource.COMMANDLINE
    given = [
        n for n in CSV_OPTIONS if (where.get(n) or values.get(n)) and ctx.get_parameter_source(n) is not commandline
    ]
    if not given:
        return where, values
    names = [n for n in cmd.arguments if n in SOURCE_ARGUMENTS]
    both = where | values
    try:
        sources = [
            _sources().resolve_source(both.get(n)) for i, n in enumerate(names) if i == 0 or both.get(n) is not None
        ]
    except QarError:
        return where, values  # (no source: its own sentence comes when it is opened)
    if any(_sources().reads_csv(source) for source in sources):
        return where, values
    defaults = {f.name: f.default for f in dataclasses.fields(SourceOptions)}
    unset = {n: defaults[n] for n in given}
    return (
        where | {n: v for n, v in unset.items() if n in where},
        values | {n: v for n, v in unset.items() if n in values},
    )


def _parsing(parse: Callable[[Any], Any]) -> Callable:
    """A click callback of the field's ``parse``: its ParameterError is click's usage error."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        try:
            return parse(value)
        except ParameterError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None

    return callback


def _decorated(decorator: Callable | click.Parameter) -> click.Parameter:
    """The click parameter a ``click.option(...)`` decorator adds (or the parameter itself)."""
    if isinstance(decorator, click.Parameter):
        return decorator
    return decorator(lambda: None).__click_params__[0]


def utf8_only(values: Mapping[str, Any]) -> None:
    """Refuse a text option or argument holding a byte that is not UTF-8 (a ``--title`` typed in
    Latin-1): no report or JSON could write it (``UnicodeEncodeError``, exit 3, after the work). A
    path may hold one: the file system takes it back as it was."""
    ctx = click.get_current_context()
    for param in ctx.command.params:
        if isinstance(param.type, click.Path) or param.name not in values:
            continue
        given = values[param.name]
        for text in given if isinstance(given, tuple | list) else [given]:
            if isinstance(text, str) and (byte := not_utf8(text)) is not None:
                raise click.BadParameter(
                    f"{text!r} holds the byte {byte}, which is not UTF-8; give it in UTF-8 (a file: rename it)",
                    ctx=ctx,
                    param=param,
                )


def cli_command(cmd: Command) -> click.Command:
    """The click command of ``cmd``: SOURCE, then every option in ``cmd.order``; one body for
    every command (parameters → prepare → session → progress → run → emit → exit with the
    verdict)."""
    fields = cmd.fields()
    known = set(fields) | set(cmd.outputs) | set(cmd.arguments)
    unknown = [n for n in cmd.order if n not in known]
    on_cli = [n for n, (_, meta) in fields.items() if meta.cli and n not in cmd.arguments]
    missing = [n for n in (*on_cli, *cmd.outputs) if n not in cmd.order]
    if unknown or missing:
        raise TypeError(f"qar {cmd.name}: options {unknown} are no field, {missing} have no place in the order")
    params: list[click.Parameter] = [
        click.Argument([name], required=False, type=click.Path(dir_okay=False))  # a file (scan's CONFIG)
        if name in fields and fields[name][1].kind == "path"
        else click.Argument([name], required=False, envvar="QAR_DATABASE_URL" if i == 0 else None)
        for i, name in enumerate(cmd.arguments)
    ]
    params += [_decorated(cmd.outputs[n]) if n in cmd.outputs else click_option(n, *fields[n]) for n in cmd.order]
    source_names = [n for n in cmd.source if n in fields or n == "source"]
    required = [n for n, (f, meta) in fields.items() if meta.cli and f.default is dataclasses.MISSING]

    def body(**values: Any) -> None:
        cmd.require(f"qar {cmd.name}")
        utf8_only(values)
        typed = dict(values)  # (as the user gave them: what the relations read)
        where = {n: values.pop(n) for n in source_names if n in values}
        where, values = _csv_options_applied(cmd, where, values)
        out = {n: values.pop(n) for n in list(values) if n in cmd.outputs}
        if cmd.parse is not None:
            values = cmd.parse(values, where, out)
        for name in required:  # (a field without a default: click's own sentence, as a required option's)
            if values.get(name) is None:
                ctx = click.get_current_context()
                raise click.MissingParameter(ctx=ctx, param=next(p for p in ctx.command.params if p.name == name))
        settings = cmd.Params(**{k: v for k, v in values.items() if v is not None})
        _check_typed(cmd, typed)  # (after the values' own checks, which name them best)
        if cmd.preview is not None:
            text = cmd.preview(where, settings, out)
            if text is not None:
                click.echo(text, nl=False)
                return
        if cmd.guard is not None:
            cmd.guard(where, settings)
        settings = _prepared(cmd, settings, where, out)
        extras = Extras(where, out)
        with Progress(cmd.progress, bool(out.get("quiet"))) as bar:
            if cmd.runner is not None:
                result = cmd.runner(where, settings, bar, out)
            else:
                result = run_on(where, cmd, settings, bar, log=extras.sql, **cmd.cli_keywords)
        report = functools.partial(cmd.html, result, settings, extras) if cmd.html is not None else None
        shown = {k: settings if k == "params" else out[k] for k in cmd.emits}
        if cmd.prints:
            fmt = out.get("fmt", "text")
            click.echo(for_format(render(result, fmt, html=report, **shown), fmt), nl=False)
        if cmd.write is not None:
            cmd.write(result, settings, extras)
        code = cmd.verdict(result, settings)
        if getattr(code, "reason", ""):
            click.echo(terminal(code.reason), err=True)  # type: ignore[attr-defined]
        if code:
            sys.exit(int(code))

    return click.Command(cmd.name, params=params, callback=body, help=cmd.help)


# --- the Python API -------------------------------------------------------------------------------


def _name_keywords(error: QarError, cmd: Command) -> None:
    """``error``'s sentence with the command line's flags written as the keywords a Python caller
    passed (``--k 1`` → ``k=1``): the checks, the parameters' own included, name flags."""
    if len(error.args) == 1 and isinstance(error.args[0], str):
        error.args = (as_keywords(error.args[0], (cmd.Params, SourceOptions)),)


def api_function(cmd: Command[P, R]) -> Callable[..., R]:
    """The Python API function of ``cmd``: its arguments (``source``) positional, then every field
    of its parameters and its source options as keywords with the dataclass's defaults, and
    ``progress``; it opens the session, calls ``run`` and writes what ``write`` writes."""
    given = {f.name: f for f in dataclasses.fields(cmd.Params)}  # type: ignore[arg-type]
    own = [f for name, f in given.items() if name not in cmd.arguments and name not in cmd.api_arguments]
    where = [f for f in dataclasses.fields(SourceOptions) if f.name in cmd.source and f.name != "source"]
    kw, positional = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD
    signature = inspect.Signature(
        [
            *(
                inspect.Parameter(
                    n, positional, default=_default(given[n]) if n in given else None, annotation="SourceLike"
                )
                for n in cmd.arguments
            ),
            *(
                inspect.Parameter(n, positional, default=_default(given[n]), annotation=given[n].type)
                for n in cmd.api_arguments
            ),
            *(inspect.Parameter(f.name, kw, default=_default(f), annotation=f.type) for f in (*own, *where)),
            inspect.Parameter("progress", kw, default=None, annotation="Progress | bool | None"),
        ],
        return_annotation=getattr(cmd.run, "__annotations__", {}).get("return", inspect.Signature.empty),
    )
    names = set(given)

    def function(*args: Any, **kwargs: Any) -> R:
        cmd.require(f"qar_sql.{cmd.name}()")
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = dict(bound.arguments)
        progress = values.pop("progress")
        keywords = {k: values.pop(k) for k in list(values) if k in names}
        for f, meta in options_of(cmd.Params):  # key="person_id" as --key writes it (not the letters p, e, …)
            text = keywords.get(f.name)
            if meta.kind == "names" and isinstance(text, str) and text.strip(", "):
                keywords[f.name] = tuple(part.strip() for part in text.split(",") if part.strip())
        try:  # (every error, the parameters' own checks' too, names the keywords)
            try:  # (the dataclass's own checks first: they name their values best)
                settings = cmd.Params(**keywords)
            except TypeError:  # (a check that compared text with a number)
                check_numbers(cmd.Params, keywords)
                raise
            check_numbers(cmd.Params, keywords)  # what click's types check on the command line
            _check_keywords(cmd, values | keywords)
            if cmd.guard is not None:
                cmd.guard(values, settings)
            result = run_on(values, cmd, _prepared(cmd, settings, values, {}), progress)
            if cmd.write is not None:
                cmd.write(result, settings, Extras(values, {}))
        except QarError as error:
            _name_keywords(error, cmd)
            raise
        return _warnings_as_keywords(result, cmd)

    function.__name__ = function.__qualname__ = cmd.name
    function.__module__ = getattr(cmd.run, "__module__", __name__)
    function.__doc__ = _docstring(cmd, [*own, *where])
    function.__signature__ = signature  # type: ignore[attr-defined]
    return with_progress(cmd.name)(function)


def _check_keywords(cmd: Command, values: Mapping[str, Any]) -> None:
    """The relations of :func:`_check_typed` for a Python caller, among its keywords: one is given
    when other than its default."""
    fields = {n: f for n, (f, _) in cmd.fields().items() if n in values}

    def given(name: str) -> bool:
        default = _default(fields[name])
        return values[name] != (None if default is inspect.Parameter.empty else default)

    relations = {n: r.within(fields) for n, r in cmd.relations().items() if n in fields}
    check_needs(
        relations,
        typed=given,
        given=given,
        value=lambda n: values.get(n),
        flag=lambda n: n,
        one_at_a_time=lambda: cmd.serial(values),
    )


def _warnings_as_keywords(result: R, cmd: Command) -> R:
    """``result`` with its warnings' flags written as the keywords the Python caller passed
    (``--exclude id`` → ``exclude='id'``), as its errors are."""
    warnings = getattr(result, "warnings", None)
    if not dataclasses.is_dataclass(result) or not isinstance(warnings, tuple) or not warnings:
        return result
    worded = tuple(as_keywords(w, (cmd.Params, SourceOptions)) if isinstance(w, str) else w for w in warnings)
    return result if worded == warnings else dataclasses.replace(result, warnings=worded)  # type: ignore[type-var]


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return inspect.Parameter.empty


def _docstring(cmd: Command, fields: Sequence[dataclasses.Field]) -> str:
    """The command's text and each keyword's help (the option's, with its flag)."""
    lines = [inspect.cleandoc(cmd.doc or cmd.help), "", "Keywords (each the option of ``qar " + cmd.name + "``):", ""]
    for f in fields:
        meta = meta_of(f)
        if meta is not None:
            off = f"``False`` is ``{meta.flags[0]}``: " if meta.kind == "off" else ""  # (its help is the flag's)
            lines.append(f"- ``{f.name}``: {off}{meta.help}")
    lines.append("- ``progress``: True for a progress bar on stderr, or a callable given each stage.")
    return "\n".join(lines)
