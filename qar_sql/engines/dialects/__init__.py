"""The engines: one module per engine declares its :class:`Dialect` (quoting and capability
flags, each with a comment why, as sqlglot's dialect classes do) and its :class:`Engine` (URL
schemes, driver extra, how secrets in its URLs are read, its test server). The dialect's name is
SQLAlchemy's backend name and the template folder that overrides the portable SQL. A URL finds
its engine by scheme (:func:`engine_of`)."""

from __future__ import annotations

from qar_sql.engines.dialects import clickhouse, duckdb, mariadb, postgresql, spark, sqlite, warehouses
from qar_sql.engines.dialects.base import Dialect, refuse_unsafe_columns, sql_comment, unsafe_character
from qar_sql.engines.dialects.unit import Engine, ServerRecipe
from qar_sql.errors import UsageError, one_of

__all__ = [
    "DIALECTS",
    "ENGINES",
    "GENERIC",
    "Dialect",
    "Engine",
    "ServerRecipe",
    "engine_named",
    "engine_of",
    "get_dialect",
    "refuse_unsafe_columns",
    "scheme_of",
    "sql_comment",
    "unsafe_character",
]

#: Every engine, in the order messages and ``qar --version`` name them.
ENGINES: tuple[Engine, ...] = (
    duckdb.ENGINE,
    postgresql.ENGINE,
    sqlite.ENGINE,
    mariadb.ENGINE,
    spark.ENGINE,
    clickhouse.ENGINE,
    *warehouses.ENGINES,
)

DIALECTS: dict[str, Dialect] = {e.name: e.dialect for e in ENGINES}
#: SQLAlchemy names MariaDB's own dialect (``mariadb+pymysql://``) "mariadb": the same SQL.
DIALECTS["mariadb"] = mariadb.DIALECT

#: Dialects for engines we have not tested get the portable SQL and ANSI quoting.
GENERIC = Dialect("default")


def scheme_of(url: str) -> str:
    """The backend of a URL: its scheme before any ``+driver``, lowercase (``mysql+pymysql://`` → mysql)."""
    return url.split("://", 1)[0].split("+", 1)[0].lower()


def engine_of(url: str) -> Engine | None:
    """The engine whose schemes include ``url``'s, or None (a URL SQLAlchemy may still open)."""
    backend = scheme_of(url)
    return next((e for e in ENGINES if backend in e.schemes), None)


def engine_named(name: str) -> Engine:
    """The engine whose dialect is called ``name``."""
    return next(e for e in ENGINES if e.name == name)


def get_dialect(name: str, *, strict: bool = False) -> Dialect:
    """The dialect called ``name`` (SQLAlchemy backend name)."""
    if name in DIALECTS:
        return DIALECTS[name]
    if strict:
        raise UsageError(f"unknown SQL dialect {name!r}; {one_of(name, DIALECTS)}")
    return Dialect(name, quote_open=GENERIC.quote_open, quote_close=GENERIC.quote_close)
