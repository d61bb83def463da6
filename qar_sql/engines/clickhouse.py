"""ClickHouse, in process, through chdb: ``chdb:///path/to/data`` and ``--table [db.]name``.

chdb is the ClickHouse engine as a Python library (no server). It has no SQLAlchemy dialect:
clickhouse-sqlalchemy speaks ClickHouse's HTTP and native protocols to a server, so it cannot
reach an embedded engine. This native :class:`~qar_sql.engines.database.Database` sends each
statement to chdb's DB-API cursor, so the audit runs ClickHouse's own SQL and only the small
results come back to Python.

Every connection first makes ClickHouse answer as SQL does where the audit relies on it
(``session_sql`` of the dialect: NULLs from outer joins and casts), then sets ``readonly = 2``:
from then on the connection can read and change settings but writes nothing, as a SELECT-only
role on PostgreSQL.

chdb keeps one embedded server per process, bound to the first data path opened; a second path
can be opened only after every connection to the first is closed.
"""

from __future__ import annotations

import contextlib
import threading

from qar_sql.engines.database import Database, Relation, Timed, closed_on_error, first_line, pick_table
from qar_sql.engines.dialects import get_dialect
from qar_sql.engines.dialects.clickhouse import ENGINE
from qar_sql.errors import DatabaseError, SourceNotFound, UsageError
from qar_sql.extras import install_hint

SCHEME = "chdb://"
INSTALL = install_hint(ENGINE.extra or "")
#: Databases of ClickHouse itself, never audited.
SYSTEM_DATABASES = ("system", "INFORMATION_SCHEMA", "information_schema")


def chdb_path(url: str) -> str:
    """``chdb:///abs/path`` → ``/abs/path``; ``chdb://relative/path`` → ``relative/path``."""
    path = url[len(SCHEME) :]
    if not path or path == "/":
        raise UsageError(
            f"the ClickHouse URL {url!r} names no data folder; write chdb:///path/to/folder "
            "(the folder chdb keeps its databases in)"
        )
    return path


class ClickHouseDatabase(Database):
    """One chdb connection; statements run one after another (ClickHouse spreads each over
    the cores itself)."""

    def __init__(self, url: str):
        try:
            import chdb  # noqa: F401
            from chdb import dbapi
        except ModuleNotFoundError as exc:
            raise UsageError(
                f"reading {url} needs chdb, the in-process ClickHouse ({exc.name} is not installed); "
                f"install it with: {INSTALL}"
            ) from exc
        self.path = chdb_path(url)
        self.url = url
        self.dialect = get_dialect("clickhouse")
        self.engine_name = "clickhouse"
        self._lock = threading.Lock()
        try:
            self.con = dbapi.connect(self.path)
        except Exception as exc:  # chdb raises its own and plain errors
            raise DatabaseError(f"cannot open ClickHouse (chdb) data at {self.path!r}: {first_line(exc)}") from exc
        with closed_on_error(self):
            for sql in self.dialect.session_sql:
                self.query(sql)
            if self.dialect.read_only_sql:
                self.query(self.dialect.read_only_sql)
            self.engine_version = str(self.query("select version()")[0][0])

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:
        if params:  # qar's statements inline their (quoted) literals; nothing binds here
            raise DatabaseError("the ClickHouse engine takes no bound parameters")
        with self._lock, Timed("clickhouse", sql) as timed:
            cur = self.con.cursor()
            try:
                cur.execute(sql)
                rows = [tuple(r) for r in cur.fetchall()] if cur.description else []
            except Exception as exc:  # chdb's ChdbError and DB-API errors alike
                raise DatabaseError(f"clickhouse failed a statement: {first_line(exc)}") from exc
            finally:
                cur.close()
            timed.rows = len(rows)
            return rows

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing never hides the error that ended the work
            self.con.close()


def open_chdb(url: str, table: str | None, threads: int | None = None) -> tuple[ClickHouseDatabase, Relation]:
    """Open the chdb data folder of ``url`` and describe ``table`` (``name`` in the current
    database, or ``database.name``)."""
    import os

    path = chdb_path(url)
    if not os.path.isdir(path):
        raise SourceNotFound(f"ClickHouse (chdb) data folder {path!r} does not exist; check the path")
    db = ClickHouseDatabase(url)
    with closed_on_error(db):
        default = str(db.query("select currentDatabase()")[0][0])
        excluded = ", ".join(db.dialect.literal(s) for s in SYSTEM_DATABASES)
        pairs = [
            (str(s), str(n))
            for s, n in db.query(f"select database, name from system.tables where database not in ({excluded})")
        ]
        relation, (schema, name) = pick_table(db.dialect, url, table, pairs, default)
        cols = tuple(
            str(r[0])
            for r in db.query(
                f"select name from system.columns where database = {db.dialect.literal(schema)} "
                f"and table = {db.dialect.literal(name)} order by position"
            )
        )
    return db, Relation(relation.sql, relation.display, cols, "table")
