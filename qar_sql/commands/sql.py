"""``qar sql`` (and ``qar audit --show-sql``): the exact SQL an audit runs, for review, rendered
without connecting to anything (:mod:`qar_sql.pushdown.showsql`).

Its run is its preview: no session is opened.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import click

from qar_sql.command import Command
from qar_sql.parameters.tail import SqlParams

NAME = "sql"
Params = SqlParams


def run(params: SqlParams) -> str:
    """Every statement of the audit, separated by ``;`` (or, with ``one_statement``, the whole
    audit as one SELECT: the dbt package's SQL)."""
    from qar_sql.pushdown.showsql import show_one_statement, show_sql

    def given(*names: str) -> dict[str, Any]:
        return {name: getattr(params, name) for name in ("table", "columns", "p", "dialect", "delimiter", *names)}

    if params.one_statement:
        return show_one_statement(params.source, **given("alpha", "pi_u"))
    return show_sql(params.source, **given("batch_size", "jobs", "null_tokens"))


def _shown(where: dict[str, Any], params: SqlParams, out: dict[str, Any]) -> str:
    """The SQL of the source options ``where`` and ``params``; --alpha and --pi-u typed on the
    command line are refused without --one-statement (a QAR_ variable or a config sets them for
    any audit)."""
    ctx = click.get_current_context()
    typed = tuple(o for o in ("alpha", "pi_u") if ctx.get_parameter_source(o) is click.core.ParameterSource.COMMANDLINE)
    return run(dataclasses.replace(params, **where, tail_given=typed))


def _no_session(session: None, params: SqlParams, progress: Any = None) -> str:
    return run(params)


COMMAND: Command[SqlParams, str] = Command(
    name=NAME,
    Params=SqlParams,
    run=_no_session,
    help="Print the exact SQL an audit runs, for review, without connecting to anything.",
    source=("source", "table", "delimiter"),
    order=("dialect", "table", "columns", "p", "delimiter", "jobs", "batch_size", "one_statement", "alpha", "pi_u"),
    preview=_shown,
)
