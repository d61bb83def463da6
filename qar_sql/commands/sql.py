"""``qar sql`` (and ``qar audit --show-sql``): the exact SQL an audit runs, for review, rendered
without connecting to anything (:mod:`qar_sql.pushdown.showsql`).

Its run is its preview: no session is opened.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from qar_sql.command import Command
from qar_sql.parameters.needs import Needs
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
    """The SQL of the source options ``where`` and ``params``."""
    return run(dataclasses.replace(params, **where))


#: The tail fit is the one statement's; the scan's batches are the scan SQL's (typed on the command
#: line: a QAR_ variable or a config sets them for any audit).
ONE = "the tail fit of the one statement; the scan SQL does not use it"
BATCHES = "the scan SQL's batches; the one statement has none"
ONLY = {name: Needs(needs=("one_statement",), why=ONE) for name in ("alpha", "pi_u")} | {
    name: Needs(unused_with=("one_statement",), why=BATCHES) for name in ("jobs", "batch_size")
}


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
    only=ONLY,
)
