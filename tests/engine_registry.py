"""Every engine the tests run qar on, by name: how to put a small table there and where qar
finds it again.

``ENGINES`` maps an engine name to its class; ``open_engine(name, tmp_path)`` checks that the
engine can run here (a server answers, a driver is installed) and returns an instance, or skips
the test with the reason on a user's machine and FAILS it under ``CI=true`` (as
tests/conftest.py does for PostgreSQL). An instance loads tables from column names and rows
(values may be None; names may hold quotes, spaces, ``;``, backticks, unicode) and returns
``(source, table)`` for ``qar_sql``: the URL or file qar opens and the table name to pass as
``table=``. ``execute`` runs DDL as the table's owner (the views ``--emit-sql`` writes) and
``fetch`` reads rows back, both with the engine's own driver, never through qar.

Adding an engine: a subclass with ``name``, ``types`` (the test type names "text", "bigint",
"double precision", "boolean" in that engine's DDL), ``quote``, ``unavailable``, ``_create``,
``execute`` and ``fetch``, and one line in ``ENGINES``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import sqlite3
import uuid
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import duckdb
from conftest import PG_URL, _pg_engine, duck_insert, require_server, server_engine, server_url
from conftest import _duck_type as guess_type

from qar_sql.engines.dialects import engine_named
from qar_sql.extras import install_hint

#: The servers' URLs, as each engine's unit says (qar_sql/engines/dialects/<engine>.py); MariaDB
#: also has a SELECT-only user on the same databases (scripts/mariadb.sh creates both).
SPARK_URL = server_url("spark")
MYSQL_URL = server_url("mysql")
MYSQL_RO_URL = os.environ.get(
    "QAR_TEST_MYSQL_RO_URL", "mysql+pymysql://qar_test_ro:qar_test_ro@127.0.0.1:3306/qar_test"
)


class Engine:
    """One engine's test tables; subclasses fill in the engine's own DDL and driver."""

    name = ""
    #: What qar reports as ``result.engine`` (SQLAlchemy's backend name).
    engine_name = ""
    #: test type name -> this engine's column type
    types: dict[str, str] = {}

    def __init__(self, tmp_path: Path):
        self.tmp_path = tmp_path

    @classmethod
    def connection(cls) -> tuple[Any, str | None]:
        """The handle shared by the whole test run (a SQLAlchemy engine, a Spark session), or
        None and why there is none; engines that need no server have neither."""
        return None, None

    @classmethod
    def unavailable(cls) -> str | None:
        """Why the engine cannot run here, or None."""
        return cls.connection()[1]

    @property
    def source(self) -> str:
        raise NotImplementedError

    def quote(self, name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    def qualified(self, name: str) -> str:
        """The quoted name of an object this instance created (for ``fetch``)."""
        return self.quote(name)

    def table_name(self, name: str) -> str:
        """What qar is given as ``table=`` for an object this instance created."""
        return name

    def load(self, table: str, names: Sequence[str], rows: Sequence[tuple], types=None) -> tuple[str, str]:
        """Create ``table`` with ``rows`` and return (source, table) for qar."""
        types = dict(types or {})
        for i, n in enumerate(names):
            types.setdefault(n, guess_type(r[i] for r in rows))
        # A type the map does not name ("double", "date") is written as given.
        ddl = ", ".join(f"{self.quote(n)} {self.types.get(types[n], types[n])}" for n in names)
        self._create(self.qualified(table), ddl, [tuple(r) for r in rows], len(names))
        return self.source, self.table_name(table)

    def load_columns(self, table: str, data: dict[str, list], types=None) -> tuple[str, str]:
        """``load`` from {column: values} (the shape conftest.Loader takes)."""
        names = list(data)
        n = len(data[names[0]]) if names else 0
        return self.load(table, names, [tuple(data[c][i] for c in names) for i in range(n)], types)

    def _create(self, full: str, ddl: str, rows: list[tuple], width: int) -> None:
        raise NotImplementedError

    def execute(self, sql: str) -> None:
        raise NotImplementedError

    def fetch(self, sql: str) -> list[tuple]:
        raise NotImplementedError

    def cleanup(self) -> None:
        pass

    def loader(self) -> ColumnLoader:
        """This engine with conftest.Loader's interface, for the oracle tests written for it."""
        return ColumnLoader(self)


class ColumnLoader:
    """``.name`` and ``.load(table, {column: values}, types)``: what the tests of the ``engine``
    fixture (tests/conftest.py) call, so their oracle checks run on every registered engine."""

    def __init__(self, engine: Engine):
        self.engine = engine
        self.name = engine.engine_name

    def load(self, table: str, data: dict[str, list], types=None) -> tuple[str, str]:
        return self.engine.load_columns(table, data, types)


class DuckDB(Engine):
    name = engine_name = "duckdb"
    types = {"text": "varchar", "bigint": "bigint", "double precision": "double", "boolean": "boolean"}

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.path = str(tmp_path / f"duck_{uuid.uuid4().hex[:8]}.duckdb")

    @property
    def source(self) -> str:
        return self.path

    def _create(self, full, ddl, rows, width):
        self.execute(f"create table {full} ({ddl})")
        if rows:
            with duckdb.connect(self.path) as con:  # closed on leaving
                duck_insert(con, full, rows, width)

    def execute(self, sql):
        with duckdb.connect(self.path) as con:
            con.execute(sql)

    def fetch(self, sql):
        with duckdb.connect(self.path, read_only=True) as con:
            return con.execute(sql).fetchall()


class SQLite(Engine):
    """A file per test; Python's own sqlite3 writes it, qar reads it through SQLAlchemy."""

    name = engine_name = "sqlite"
    # SQLite has no boolean type: True and False are stored as 1 and 0 (as SQLAlchemy does).
    types = {"text": "text", "bigint": "integer", "double precision": "real", "double": "real", "boolean": "integer"}

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.path = tmp_path / f"lite_{uuid.uuid4().hex[:8]}.db"

    @property
    def source(self) -> str:
        return f"sqlite:///{self.path}"

    def _create(self, full, ddl, rows, width):
        # sqlite3's own context manager commits but does not close: closing() does.
        with closing(sqlite3.connect(self.path)) as con:
            con.execute(f"create table {full} ({ddl})")
            con.executemany(f"insert into {full} values ({', '.join(['?'] * width)})", rows)
            con.commit()

    def execute(self, sql):
        with closing(sqlite3.connect(self.path)) as con:
            con.executescript(sql)

    def fetch(self, sql):
        with closing(sqlite3.connect(self.path)) as con:
            return con.execute(sql).fetchall()


class _SQLAlchemyServer(Engine):
    """A server reached through SQLAlchemy: every instance works in a schema of its own."""

    url = ""
    _state: dict = {}

    @classmethod
    def connection(cls):
        return server_engine(cls.url, cls.name, cls._state)

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.eng = self.connection()[0]
        self.schema = self._schema_name()
        self.execute(f"create schema {self.quote(self.schema)}")

    def _schema_name(self) -> str:
        return f"t_{uuid.uuid4().hex[:10]}"

    @property
    def source(self) -> str:
        return self.url

    def qualified(self, name):
        return f"{self.quote(self.schema)}.{self.quote(name)}"

    def table_name(self, name):
        return f"{self.schema}.{name}"

    def _create(self, full, ddl, rows, width):
        raw = self.eng.raw_connection()
        try:
            cur = raw.cursor()
            cur.execute(f"create table {full} ({ddl})")
            if rows:
                cur.executemany(f"insert into {full} values ({', '.join(['%s'] * width)})", rows)
            raw.commit()
        finally:
            raw.close()

    def execute(self, sql):
        raw = self.eng.raw_connection()
        try:
            cur = raw.cursor()
            cur.execute(sql)
            raw.commit()
        finally:
            raw.close()

    def fetch(self, sql):
        with self.eng.connect() as c:
            return [tuple(r) for r in c.exec_driver_sql(sql, execution_options={"no_parameters": True})]

    def cleanup(self):
        self.execute(f"drop schema {self.quote(self.schema)} cascade")


class PostgreSQL(_SQLAlchemyServer):
    name = engine_name = "postgresql"
    url = PG_URL
    types = {"text": "text", "bigint": "bigint", "double precision": "double precision", "boolean": "boolean"}

    @classmethod
    def connection(cls):
        return _pg_engine()  # conftest's: one connection check for the whole session


class MariaDB(_SQLAlchemyServer):
    """A database per instance (MySQL's schema), named ``qar_test_…`` so the test user may
    create it. Text columns keep the server's default collation, which is case- and
    trailing-space-insensitive: qar must compare bytes to count as DuckDB does."""

    name = "mariadb"
    engine_name = "mysql"  # SQLAlchemy's name for mysql+pymysql://
    url = MYSQL_URL
    _state: dict = {}
    types = {"text": "text", "bigint": "bigint", "double precision": "double", "boolean": "boolean"}

    def _schema_name(self):
        return f"qar_test_{uuid.uuid4().hex[:10]}"

    def quote(self, name):
        return "`" + name.replace("`", "``") + "`"

    def execute(self, sql):
        # pymysql formats '%' only when arguments are given: none here, so '%' in a name is safe.
        super().execute(sql)

    def cleanup(self):
        self.execute(f"drop database {self.quote(self.schema)}")


class Spark(Engine):
    """The Spark Connect server of scripts/spark.sh (``QAR_TEST_SPARK_URL``). Each instance is a
    database of its own; a table is written as Parquet by DuckDB and registered from that file
    (``create table … using parquet location``), as a data lake's tables are. One client
    session for the whole test run does the loading; qar opens sessions of its own.

    Spark's catalog takes only letters, digits and ``_`` in a table name, so the hostile table
    name is mapped to ``t_<hash>``; the hostile column names stay as they are."""

    name = engine_name = "spark"
    # Parquet written by DuckDB: these are DuckDB's types.
    types = {"text": "varchar", "bigint": "bigint", "double precision": "double", "boolean": "boolean"}
    _state: dict = {}

    @classmethod
    def connection(cls):
        state = cls._state
        if not state:
            url = SPARK_URL
            if not url:
                state["error"] = "QAR_TEST_SPARK_URL is not set (scripts/spark.sh starts a Spark Connect server)"
                return None, state["error"]
            try:
                import socket

                from pyspark.sql import SparkSession

                host, _, port = url[len("sc://") :].split("/", 1)[0].partition(":")
                socket.create_connection((host, int(port or 15002)), timeout=5).close()
                state["session"] = SparkSession.builder.remote(url).create()
                state["session"].sql("select 1").collect()
            except Exception as exc:  # pyspark missing or server down
                state["error"] = f"Spark Connect at {url} is unreachable: {str(exc).strip().splitlines()[0]}"
        return state.get("session"), state.get("error")

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.spark = self.connection()[0]
        self.database = f"t_{uuid.uuid4().hex[:10]}"
        self.execute(f"create database {self.database}")

    @property
    def source(self) -> str:
        return SPARK_URL

    def quote(self, name):
        return "`" + name.replace("`", "``") + "`"

    def _safe(self, name: str) -> str:
        return "t_" + hashlib.sha256(name.encode()).hexdigest()[:12]

    def qualified(self, name):
        return f"{self.database}.{self._safe(name)}"

    def table_name(self, name):
        return f"{self.database}.{self._safe(name)}"

    def _create(self, full, ddl, rows, width):
        path = self.tmp_path / f"spark_{uuid.uuid4().hex[:8]}.parquet"
        con = duckdb.connect()
        try:
            con.execute(f"create table t ({_duck_ddl(ddl)})")
            if rows:
                duck_insert(con, "t", rows, width)
            con.execute(f"copy t to '{path}' (format parquet)")
        finally:
            con.close()
        self.execute(f"create table {full} using parquet location '{path}'")

    def execute(self, sql):
        self.spark.sql(sql.strip().rstrip(";")).collect()

    def fetch(self, sql):
        return [tuple(r) for r in self.spark.sql(sql).collect()]

    def cleanup(self):
        self.execute(f"drop database {self.database} cascade")


def _duck_ddl(ddl: str) -> str:
    """Spark's backtick-quoted column list as DuckDB's double-quoted one."""
    import re

    return re.sub(r"`((?:[^`]|``)*)`", lambda m: '"' + m.group(1).replace("``", "`").replace('"', '""') + '"', ddl)


class ClickHouse(Engine):
    """chdb, the in-process ClickHouse. chdb binds a process to one data folder, so every
    instance is a database of its own in one folder for the whole test run (MergeTree tables,
    every column Nullable as SQL columns are)."""

    name = engine_name = "clickhouse"
    types = {
        "text": "Nullable(String)",
        "bigint": "Nullable(Int64)",
        "double precision": "Nullable(Float64)",
        "double": "Nullable(Float64)",
        "boolean": "Nullable(Bool)",
        "date": "Nullable(Date)",
    }
    _folder: list[str] = []

    @classmethod
    def unavailable(cls):
        unit = engine_named(cls.engine_name)
        gone = [m for m in unit.modules if importlib.util.find_spec(m) is None]
        return f"{', '.join(gone)} is not installed ({install_hint(unit.extra or '')})" if gone else None

    @classmethod
    def folder(cls) -> str:
        if not cls._folder:
            import tempfile

            cls._folder.append(tempfile.mkdtemp(prefix="qar-chdb-"))
        return cls._folder[0]

    def __init__(self, tmp_path):
        super().__init__(tmp_path)
        self.database = f"t_{uuid.uuid4().hex[:10]}"
        self.execute(f"create database {self.database}")

    @property
    def source(self) -> str:
        return f"chdb://{self.folder()}"

    def quote(self, name):
        return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"

    def qualified(self, name):
        return f"{self.database}.{self.quote(name)}"

    def table_name(self, name):
        return f"{self.database}.{name}"

    def _create(self, full, ddl, rows, width):
        self.execute(f"create table {full} ({ddl}) engine = MergeTree order by tuple()")
        if rows:
            values = ", ".join("(" + ", ".join(_ch_literal(v) for v in r) + ")" for r in rows)
            self.execute(f"insert into {full} settings precise_float_parsing = 1 values {values}")

    def _run(self, sql: str) -> list[tuple]:
        import chdb

        from qar_sql.engines.dialects import get_dialect

        con = chdb.connect(self.folder())
        try:
            cur = con.cursor()
            # The settings qar's connections run with (SQL's NULLs, exact float parsing), as
            # docs/engines.md tells a view's readers to set: an emitted view carries them in its
            # SETTINGS clause too, but a noise view read without them in the session passed 8 GB
            # in 15 s (1 s with them).
            for setting in get_dialect("clickhouse").session_sql:
                cur.execute(setting)
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()] if cur.description else []
        finally:
            con.close()

    def execute(self, sql):
        self._run(sql.strip().rstrip(";"))

    def fetch(self, sql):
        return self._run(sql)

    def cleanup(self):
        self.execute(f"drop database {self.database}")


def _ch_literal(v) -> str:
    """A ClickHouse literal: a float by its shortest exact repr, text with backslash escapes."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v) if not isinstance(v, float) or math.isfinite(v) else f"'{v}'"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return "'" + str(v) + "'"


#: Engine name -> its test class. engdist adds "spark" and "clickhouse" here.
ENGINES: dict[str, type[Engine]] = {
    "duckdb": DuckDB,
    "postgresql": PostgreSQL,
    "sqlite": SQLite,
    "mariadb": MariaDB,
    "spark": Spark,
    "clickhouse": ClickHouse,
}


def require(name: str) -> None:
    """Skip (locally) or fail (CI=true) when the engine cannot run here."""
    require_server(name, ENGINES[name].unavailable())


def open_engine(name: str, tmp_path: Path) -> Engine:
    """An instance of the engine called ``name``, after ``require``."""
    require(name)
    return ENGINES[name](tmp_path)
