"""SQL dialects: one module per engine declares its :class:`Dialect` (quoting and capability
flags, each with a comment why), as sqlglot's dialect classes do. The name is SQLAlchemy's
backend name and the template folder that overrides the portable SQL."""

from __future__ import annotations

from qar_sql.engines.dialects import clickhouse, duckdb, mariadb, postgresql, spark, sqlite, warehouses
from qar_sql.engines.dialects.base import Dialect, sql_comment, unsafe_character
from qar_sql.errors import UsageError

__all__ = ["DIALECTS", "GENERIC", "Dialect", "get_dialect", "sql_comment", "unsafe_character"]

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (
        duckdb.DIALECT,
        postgresql.DIALECT,
        sqlite.DIALECT,
        mariadb.DIALECT,
        spark.DIALECT,
        clickhouse.DIALECT,
        warehouses.SNOWFLAKE,
        warehouses.BIGQUERY,
        warehouses.TRINO,
        warehouses.DATABRICKS,
        warehouses.REDSHIFT,
    )
}
#: SQLAlchemy names MariaDB's own dialect (``mariadb+pymysql://``) "mariadb": the same SQL.
DIALECTS["mariadb"] = mariadb.DIALECT

#: Dialects for engines we have not tested get the portable SQL and ANSI quoting.
GENERIC = Dialect("default")


def get_dialect(name: str, *, strict: bool = False) -> Dialect:
    """The dialect called ``name`` (SQLAlchemy backend name)."""
    if name in DIALECTS:
        return DIALECTS[name]
    if strict:
        import difflib

        close = difflib.get_close_matches(name, DIALECTS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise UsageError(f"unknown SQL dialect {name!r}{hint} Choose one of: {', '.join(DIALECTS)}.")
    return Dialect(name, quote_open=GENERIC.quote_open, quote_close=GENERIC.quote_close)
