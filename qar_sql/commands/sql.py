"""``qar sql`` (and ``qar audit --show-sql``): the exact SQL an audit runs, for review, rendered
without connecting to anything (:mod:`qar_sql.pushdown.showsql`).

Its run is its preview: no session is opened.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from qar_sql.command import Command
from qar_sql.parameters.needs import Needs
from qar_sql.parameters.tail import SqlParams

NAME = "sql"
Params = SqlParams


def _showsql() -> Any:
    """:mod:`qar_sql.pushdown.showsql`, loaded when the SQL is shown, not by ``qar --help``."""
    from qar_sql.pushdown import showsql

    return showsql


def run(params: SqlParams) -> str:
    """Every statement of the audit, separated by ``;`` (or, with ``one_statement``, the whole
    audit as one SELECT: the dbt package's SQL)."""
    show = _showsql()

    def given(*names: str) -> dict[str, Any]:
        return {name: getattr(params, name) for name in ("table", "columns", "p", "dialect", "delimiter", *names)}

    if params.one_statement:
        return show.show_one_statement(params.source, **given("alpha", "pi_u"))
    return show.show_sql(params.source, **given("batch_size", "jobs", "null_tokens"))


def _shown(where: dict[str, Any], params: SqlParams, out: dict[str, Any]) -> str:
    """The SQL of the source options ``where`` and ``params``."""
    return run(dataclasses.replace(params, **where))


#: The tail fit is the one statement's; the scan's batches are the scan SQL's (typed on the command
#: line: a QAR_ variable or a config sets them for any audit).
ONE = "the tail fit of the one statement; the scan SQL does not use it"
BATCHES = "the scan SQL's batches; the one statement has none"
ONLY = {name: Needs(needs=("one_statement",), why=ONE) for name in ("alpha", "pi_u")} | {
    "batch_size": Needs(unused_with=("one_statement",), why=BATCHES),
    # (--jobs only sets how many QIs a statement holds where no --batch-size does, on PostgreSQL)
    "jobs": Needs(
        unused_with=("one_statement", "batch_size"),
        why="it splits the scan SQL's QIs into a batch per connection",
        concurrent=True,
    ),
}


def jobs_unused(values: Mapping[str, Any]) -> str | None:
    """Why --jobs leaves the statements shown unchanged (:func:`~qar_sql.pushdown.showsql.jobs_unused`)."""
    return _showsql().jobs_unused(values.get("source"), values.get("dialect"))


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
    one_at_a_time=jobs_unused,
)
