"""``qar sql`` (and ``qar audit --show-sql``): the exact SQL an audit runs, for review, rendered
without connecting to anything (:mod:`qar_sql.pushdown.showsql`).

The command's shape without a session (nothing is read): its parameters
(:class:`~qar_sql.parameters.tail.SqlParams`) and ``run(params) → the SQL text``.
"""

from __future__ import annotations

from qar_sql.parameters.tail import SqlParams
from qar_sql.pushdown.showsql import show_one_statement, show_sql

NAME = "sql"
Params = SqlParams


def run(params: SqlParams) -> str:
    """Every statement of the audit, separated by ``;`` (or, with ``one_statement``, the whole
    audit as one SELECT: the dbt package's SQL)."""
    s = params
    if s.one_statement:
        return show_one_statement(
            s.source, table=s.table, columns=s.columns, p=s.p, alpha=s.alpha, pi_u=s.pi_u, dialect=s.dialect,
            delimiter=s.delimiter,
        )  # fmt: skip
    return show_sql(
        s.source, table=s.table, columns=s.columns, p=s.p, delimiter=s.delimiter, dialect=s.dialect,
        batch_size=s.batch_size, jobs=s.jobs, null_tokens=s.null_tokens,
    )  # fmt: skip
