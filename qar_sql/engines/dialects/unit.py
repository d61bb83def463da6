"""The :class:`Engine` record: everything qar knows about one engine besides its SQL flags, so
that an engine is one module (``qar_sql/engines/dialects/<engine>.py``: its ``DIALECT`` and its
``ENGINE``) plus, for a native driver, its adapter module. qar finds an engine by the scheme of
the URL it is given (:func:`qar_sql.engines.dialects.engine_of`); nothing outside the engine's
module names it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qar_sql.engines.dialects.base import Dialect


@dataclass(frozen=True)
class ServerRecipe:
    """Where the test suite finds the engine's server: the URL in ``env`` (else ``default``),
    started by ``script`` (scripts/test.sh runs it; tests skip, or fail under CI=true, when it
    does not answer)."""

    env: str
    default: str = ""
    script: str = ""

    def url(self) -> str:
        return os.environ.get(self.env, self.default)


@dataclass(frozen=True)
class Engine:
    #: Its SQL: quoting and capability flags; ``dialect.name`` names the template folder
    #: (``templates/<name>/``) and is what results report as the engine.
    dialect: Dialect
    #: URL schemes it serves (the backend before any ``+driver``, lowercase).
    schemes: tuple[str, ...] = ()
    #: How a URL of each backend should be written (``mysql+pymysql``), said when its driver is
    #: missing; a scheme with no form of its own gets the first.
    url_forms: tuple[str, ...] = ()
    #: The ``qar-sql[extra]`` that installs its driver, the driver's top-level modules (checked
    #: without importing them) and the distributions ``qar --version`` reports.
    extra: str | None = None
    modules: tuple[str, ...] = ()
    distributions: tuple[str, ...] = ()
    #: How secrets in its URLs are found: "sqlalchemy" reads ``user:password@host`` as
    #: SQLAlchemy does (a password may hold ``/`` and ``?``); "plain" URLs are read by qar's own
    #: adapter, whose authority ends at the first ``/``, ``?`` or ``#`` (``sc://h/;token=…``).
    url_reading: str = "sqlalchemy"
    #: ``module:function`` of a native adapter's ``open(url, table, threads) -> (Database,
    #: Relation)``, imported only when such a URL is opened; None: SQLAlchemy opens it.
    opener: str | None = None
    #: ``(sqlalchemy, url) -> sqlalchemy Engine`` where its URLs need more than
    #: ``create_engine(url)`` (SQLite: the file opened read-only, its missing aggregates added).
    sqlalchemy_engine: Callable[[Any, str], Any] | None = None
    #: ``(db, schema, table) -> [(column, declared type, is text)]`` where SQLAlchemy's reflection
    #: misreads the catalog; None: SQLAlchemy's inspector describes the table.
    describe: Callable[[Any, str, str], list[tuple[str, str, bool]]] | None = None
    #: ``[driver type code] -> [type name]``: the result columns' types as the driver reports
    #: them, for an engine whose SQL cannot name a type (``Dialect.typeof`` False).
    type_names: Callable[[list[Any]], list[str]] | None = None
    #: The local file a URL of it names (``duckdb:///path``), or None: qar's outputs may not
    #: overwrite it (qar_sql/guard.py).
    local_file: Callable[[str], str | None] | None = None
    #: The test server (None: in process, nothing to start).
    test_server: ServerRecipe | None = None
    #: Why ``--jobs`` has no effect on it, one clause that names it ("DuckDB runs one statement at
    #: a time ..."), or "" where it has one: SQLAlchemy's adapter runs a scan's statements on
    #: ``--jobs`` concurrent connections (``SQLAlchemyDatabase.query_many``), a native adapter
    #: that inherits ``Database.query_many`` runs them one after another on its one connection.
    one_at_a_time: str = ""

    @property
    def name(self) -> str:
        return self.dialect.name
