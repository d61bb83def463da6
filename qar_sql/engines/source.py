"""Sources: turn what the user named (a file, a DuckDB file, a SQLAlchemy URL, an in-memory frame,
or a :class:`Source` already open) into a database connection, a dialect and a quoted relation to
read from.

Files are read in place by an in-memory DuckDB; DuckDB database files are opened read-only;
every other engine goes through SQLAlchemy inside a read-only transaction. Nothing here ever
writes to the audited database.
"""

from __future__ import annotations

import contextlib
import difflib
import gzip
import importlib
import numbers
import os
import re
import secrets
import shutil
import tempfile
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np

from qar_sql import user_files
from qar_sql.engines import frames
from qar_sql.engines.cancel import Running
from qar_sql.engines.database import (
    Database,
    Relation,
    Timed,
    check_url,
    closed_on_error,
    connect_failure,
    first_line,
    log,
    pick_table,
)
from qar_sql.engines.dialects import (
    ENGINES,
    Dialect,
    Engine,
    engine_named,
    engine_of,
    get_dialect,
    scheme_of,
    unsafe_character,
)
from qar_sql.engines.drivers import driver_hint
from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.engines.session import Session, temp_name
from qar_sql.errors import ColumnError, DatabaseError, DataError, SourceNotFound, UsageError
from qar_sql.extras import require
from qar_sql.rules import check_null_tokens

URL_ENV = "QAR_DATABASE_URL"

CSV_SUFFIXES = (".csv", ".tsv", ".txt", ".csv.gz", ".tsv.gz", ".csv.zst")
PARQUET_SUFFIXES = (".parquet", ".pq")
DUCKDB_SUFFIXES = (".duckdb", ".ddb", ".db")


def is_url(source: str) -> bool:
    return "://" in source


class DuckDBDatabase(Database):
    """Embedded DuckDB: in memory for files, read-only for database files."""

    def __init__(self, path: str | None = None, *, threads: int | None = None):
        import duckdb

        self._duckdb = duckdb
        # A bad file, as a bad CSV: exit 2.
        not_duckdb = UsageError(
            f"{path!r} is not a DuckDB database file; name a DuckDB file, a CSV or Parquet file by "
            "its suffix (.csv, .parquet), or a SQLite file by its URL (sqlite:///file.db)"
        )
        if path is not None and user_files.foreign_file(path):
            raise not_duckdb
        try:
            self.con = duckdb.connect(":memory:" if path is None else path, read_only=path is not None)
        except duckdb.Error as exc:
            if "Could not set lock" in str(exc):
                # Another process (typically dbt, building the warehouse) has the file open for
                # writing, and DuckDB lets no other process read it meanwhile.
                raise DatabaseError(
                    f"DuckDB database {path!r} is locked by another process (a running dbt build?); retry after it ends"
                ) from exc
            if path is not None and not user_files.is_duckdb_file(path):
                raise not_duckdb from None
            raise DatabaseError(f"cannot open DuckDB database {path!r}: {first_line(exc)}") from exc
        # DuckDB draws its own progress bar on stdout; ours goes to stderr. In a Jupyter kernel
        # without ipywidgets DuckDB has already switched its bar off and refuses any change to the
        # setting ("ipywidgets is missing"), so it is only turned off where it is on.
        if self.con.execute("select current_setting('enable_progress_bar')").fetchone() != (False,):
            self.con.execute("set enable_progress_bar = false")
        # The scan's GROUP BYs are over small integer codes whose ranges DuckDB knows from the
        # temp table's statistics; up to 2^20 key slots it then counts with a direct-index
        # ("perfect") hash table instead of a general one (default limit 2^12).
        self.con.execute("set perfect_ht_threshold = 20")
        if threads:
            self.con.execute(f"set threads = {int(threads)}")
        self.dialect = get_dialect("duckdb")
        self.engine_name = "duckdb"
        self.engine_version = duckdb.__version__
        self._lock = threading.Lock()
        self._spools: list[str] = []

    def spool_relation(self, relation: Any, name: str) -> None:
        """View ``name`` over a DuckDB relation of another connection: that connection writes it
        to Parquet in a temporary folder, deleted at :meth:`close`."""
        folder = tempfile.mkdtemp(prefix="qar_relation_")
        self._spools.append(folder)
        path = os.path.join(folder, "relation.parquet")
        relation.write_parquet(path)
        literal = "'" + path.replace("'", "''") + "'"
        self.con.execute(f"create view {self.dialect.quote(name)} as select * from read_parquet({literal})")

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:
        with self._lock, Timed("duckdb", sql) as timed:
            try:
                rows = self.con.execute(sql, params).fetchall() if params else self.con.execute(sql).fetchall()
            except (self._duckdb.Error, RuntimeError) as exc:
                raise _duckdb_error(exc) from exc
            timed.rows = len(rows)
            return rows

    def arrays(self, sql: str, columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """As :meth:`Database.arrays`, by DuckDB's native fetch: no Python objects per row."""
        with self._lock, Timed("duckdb", sql) as timed:
            try:
                raw = self.con.execute(sql).fetchnumpy()
            except (self._duckdb.Error, RuntimeError) as exc:
                raise _duckdb_error(exc) from exc
            timed.rows = len(next(iter(raw.values()))) if raw else 0
        if list(raw) != list(columns):
            raise DatabaseError(f"duckdb returned the columns {list(raw)} where {list(columns)} were expected")
        out = {}
        for name, values in raw.items():
            dtype = np.dtype(columns[name])
            if np.ma.isMaskedArray(values):  # a column with NULLs: NaN where float, as elsewhere
                if dtype.kind != "f":
                    raise DatabaseError(f"column {name!r} of a result has NULLs where integers were expected")
                values = np.ma.filled(values.astype(dtype), np.nan)
            out[name] = np.asarray(values, dtype=dtype)
        return out

    def arrow_batches(self, sql: str, names: Sequence[str], batch_rows: int) -> Iterator[Any]:
        """As :meth:`Database.arrow_batches`, by DuckDB's own Arrow reader."""
        # The connection is not shared while the batches are read: hold its lock throughout.
        with self._lock:
            try:
                relation = self.con.sql(sql)
                # A relation streams its batches without the extra copy a DB-API result makes;
                # DuckDB 2 names the call to_arrow_reader, DuckDB 1 fetch_arrow_reader.
                reader_of = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
                yield from reader_of(batch_rows)
            except self._duckdb.Error as exc:
                raise DatabaseError(f"DuckDB failed: {str(exc).splitlines()[0]}") from exc

    @contextmanager
    def array_relation(self, arrays: Mapping[str, np.ndarray]) -> Iterator[tuple[str, dict | None]]:
        """As :meth:`Database.array_relation`: the arrays registered as a view, scanned in place."""
        name = temp_name("arrays")
        self.con.register(name, dict(arrays))  # an in-memory view of the arrays, not a table write
        try:
            yield self.dialect.quote(name), None
        finally:
            self.con.unregister(name)

    def stored_row_order(self, relation_sql: str) -> str | None:
        """DuckDB tables number their rows as stored (``rowid``); views and frames do not."""
        try:
            self.query(f"select rowid from {relation_sql} limit 0")
        except DatabaseError:
            return None
        return "rowid"

    def close(self) -> None:
        self.con.close()
        for folder in self._spools:
            shutil.rmtree(folder, ignore_errors=True)
        self._spools.clear()


def sqlalchemy_engine(url: str) -> Any:
    """The SQLAlchemy engine of ``url``, made but not connected (no pool: each connection is
    opened when asked for): the URL read (:func:`~qar_sql.engines.database.check_url`), its
    dialect and driver imported; a fault is one sentence with the fix (exit 2)."""
    import sqlalchemy as sa

    masked = mask_source(url)
    check_url(url, f"database URL {masked}")
    try:
        unit = engine_of(url)
        if unit is not None and unit.sqlalchemy_engine is not None:
            return unit.sqlalchemy_engine(sa, url)
        return sa.create_engine(url, poolclass=sa.pool.NullPool)
    except ModuleNotFoundError as exc:
        raise UsageError(f"the database driver for {masked} is not installed ({exc.name}){driver_hint(url)}") from exc
    except sa.exc.ArgumentError as exc:  # NoSuchModuleError too
        backend, hint = scheme_of(url), driver_hint(url)
        missing = isinstance(exc, sa.exc.NoSuchModuleError) and str(exc).rstrip().endswith(f"dialects:{backend}")
        if hint and missing:  # the dialect itself is missing
            raise UsageError(f"the SQLAlchemy dialect for {backend} ({masked}) is not installed{hint}") from exc
        raise UsageError(
            f"cannot use database URL {masked}: {scrub(first_line(exc), secret_values(url))}; "
            "write it as dialect+driver://user:password@host/database"
        ) from exc


class SQLAlchemyDatabase(Database):
    """Any SQLAlchemy engine; every connection runs in a read-only transaction where the
    dialect has one, so an audit works for a role with SELECT privilege only."""

    def __init__(self, url: str):
        import sqlalchemy as sa

        self._sa = sa
        self.masked_url = mask_source(url)
        self.secrets = secret_values(url)
        self.unit = engine_of(url)
        self.engine = sqlalchemy_engine(url)
        self.dialect = get_dialect(self.engine.dialect.name)
        self.engine_name = self.engine.dialect.name
        self.declared_types = {}
        self._conns: list = []
        self._idle: list = []
        self._lock = threading.Lock()
        self._running = Running()  # Ctrl-C cancels these on the server (engines/cancel.py)
        self._snapshot: str | None = None
        self._main = self._connect(main=True)
        version = self.engine.dialect.server_version_info or ()
        self.engine_version = ".".join(str(v) for v in version)

    def _connect(self, main: bool = False):
        sa = self._sa
        try:
            conn = self.engine.connect()
            try:
                self._begin(conn, None if main else self._snapshot)
            except sa.exc.DBAPIError:
                if main or not self._snapshot:
                    raise
                # The main transaction ended (a failed statement aborts it), taking its
                # snapshot along: read a snapshot of this connection's own; a table changing
                # mid-scan is then still detected.
                conn.rollback()
                self._begin(conn)
            if main:
                self._snapshot = self._export_snapshot(conn)
        except sa.exc.DBAPIError as exc:
            raise connect_failure(exc, self.masked_url, self.secrets) from exc
        self._conns.append(conn)
        return conn

    def _export_snapshot(self, conn) -> str | None:
        """The main transaction's snapshot id, or None where the server cannot export one
        (then each connection reads its own snapshot, and a table changing mid-scan is
        detected — the QIs disagree on L — instead of prevented)."""
        if not self.dialect.snapshot_export_sql:
            return None
        try:  # (not in a savepoint: PostgreSQL exports no snapshot from a subtransaction)
            return str(conn.exec_driver_sql(self.dialect.snapshot_export_sql).scalar())
        except self._sa.exc.DBAPIError:
            conn.rollback()  # the failure aborted the transaction: begin a fresh one
            self._begin(conn)
            return None

    def _begin(self, conn, snapshot: str | None = None) -> None:
        """Start the connection's read-only transaction: isolation, the shared snapshot (before
        any query, as PostgreSQL requires), then the session settings."""
        d = self.dialect
        if d.read_only_sql:
            conn.exec_driver_sql(d.read_only_sql)
        if snapshot and d.snapshot_import_sql:
            conn.exec_driver_sql(d.snapshot_import_sql.format(snapshot=d.literal(snapshot)))
        for sql in d.session_sql:
            conn.exec_driver_sql(sql)

    def recover(self) -> None:
        """After a failed statement (PostgreSQL aborts the transaction), start a fresh
        read-only transaction on the main connection, e.g. to explain the failure."""
        self._main.rollback()
        self._begin(self._main)
        self._snapshot = self._export_snapshot(self._main)

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:
        sa = self._sa
        # Worker threads borrow an idle connection (each in its own read-only transaction);
        # the caller's thread uses the main one.
        main = threading.current_thread() is threading.main_thread()
        conn = self._main if main else self._borrow()
        try:
            with Timed(self.engine_name, sql) as timed, self._running.statement(_driver(conn)):
                # no_parameters: without params the driver gets the SQL alone, so a '%' in a quoted
                # name is not taken for a placeholder (psycopg fails on a column named "50%").
                result = (
                    conn.exec_driver_sql(_escape_percent(sql, params), params)
                    if params
                    else conn.exec_driver_sql(sql, execution_options={"no_parameters": True})
                )
                rows = [tuple(r) for r in result.fetchall()]
                timed.rows = len(rows)
            return rows
        except sa.exc.DBAPIError as exc:
            raise DatabaseError(f"{self.engine_name} failed a statement: {first_line(exc.orig or exc)}") from exc
        finally:
            if not main:
                self._idle.append(conn)

    def stream(self, sql: str, chunk: int):
        """Rows in chunks from a server-side cursor (no L-row list in memory at once)."""
        sa = self._sa
        log.debug("%s streaming: %s", self.engine_name, sql.strip())
        try:
            # no_parameters, as in query(): a '%' in a quoted name is not a placeholder.
            with self._running.statement(_driver(self._main)):
                result = self._main.exec_driver_sql(
                    sql, execution_options={"stream_results": True, "no_parameters": True}
                )
            while True:
                with self._running.statement(_driver(self._main)):
                    rows = result.fetchmany(chunk)
                if not rows:
                    break
                yield rows
        except sa.exc.DBAPIError as exc:
            raise DatabaseError(f"{self.engine_name} failed a statement: {first_line(exc.orig or exc)}") from exc

    def _borrow(self):
        try:
            return self._idle.pop()
        except IndexError:
            with self._lock:
                return self._connect()

    def query_many(self, statements, *, jobs=1, on_done=None):
        if jobs <= 1 or len(statements) <= 1:
            return super().query_many(statements, on_done=on_done)

        def run(sql):
            out = self.query(sql)
            if on_done:
                on_done()
            return out

        # Ctrl-C reaches only this thread: it also cancels the workers' statements on the server,
        # and keeps them from starting new ones until the pool has stopped (interruptible() is
        # left after the pool's exit has waited for its workers).
        with self._running.interruptible(), ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="qar-scan") as pool:
            return list(pool.map(run, statements))

    def array_relation(self, arrays: Mapping[str, np.ndarray]) -> AbstractContextManager[tuple[str, dict | None]]:
        """As :meth:`Database.array_relation`: the arrays bound as parameters and unnested
        (PostgreSQL)."""
        d = self.dialect
        if not d.array_relation:
            return super().array_relation(arrays)
        # Placeholder names no column or table name can hold by chance: query() doubles every
        # other '%' of the statement (a name such as "a%" would read as a placeholder).
        tag = secrets.token_hex(6)  # parameter names, not a temp table's (temp_name)
        params = {f"qar{tag}_{i}": np.asarray(a, dtype=np.int64).tolist() for i, a in enumerate(arrays.values())}
        casts = ", ".join(f"cast(%({p})s as {d.bigint}[])" for p in params)
        names = ", ".join(d.quote(n) for n in arrays)
        return nullcontext((f"(select * from unnest({casts}) as x({names}))", params))

    def result_types(self, sql: str) -> list[str]:
        """The type names the driver reports for the columns of ``sql`` (run with no rows
        fetched): for engines whose SQL cannot name a type (the engine's ``type_names``)."""
        sa = self._sa
        try:
            result = self._main.exec_driver_sql(sql, execution_options={"no_parameters": True})
            codes = [d[1] for d in result.cursor.description]
            result.close()
        except sa.exc.DBAPIError as exc:
            raise DatabaseError(f"{self.engine_name} failed a statement: {first_line(exc.orig or exc)}") from exc
        return self.unit.type_names(codes) if self.unit and self.unit.type_names else [str(c) for c in codes]

    def inspector(self):
        return self._sa.inspect(self._main)

    def close(self) -> None:
        for conn in self._conns:
            with contextlib.suppress(Exception):  # closing never hides the error that ended the work
                conn.rollback()
                conn.close()
        self._conns.clear()
        self.engine.dispose()


def _escape_percent(sql: str, params: Mapping[str, Any]) -> str:
    """``sql`` for a driver that reads ``%(name)s`` placeholders: every '%' but those of the
    placeholders of ``params`` doubled, so that a quoted name holding '%' stays text."""
    names = "|".join(re.escape(str(n)) for n in params)
    return re.sub(rf"%(?!\((?:{names})\)s)", "%%", sql)


def _driver(conn) -> Any:
    """The DBAPI driver's own connection under a SQLAlchemy connection (None if it has none)."""
    try:
        return conn.connection.driver_connection
    except Exception:  # noqa: BLE001 - a closed or invalidated connection: nothing to cancel
        return None


def is_interrupt(exc: BaseException) -> bool:
    """DuckDB stops a query on Ctrl-C (SIGINT) and raises RuntimeError("Query interrupted") or
    duckdb.InterruptException instead of KeyboardInterrupt."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if type(exc).__name__ == "InterruptException":
        return True
    return isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower()


def _duckdb_error(exc: BaseException) -> BaseException:
    """A DuckDB failure as a DatabaseError; Ctrl-C as KeyboardInterrupt, so that it stops the
    command (and every scan of qar scan) instead of failing one statement."""
    if is_interrupt(exc):
        return KeyboardInterrupt()
    if isinstance(exc, RuntimeError):
        return exc
    return DatabaseError(f"DuckDB failed: {first_line(exc)}")


def file_kind(path: str) -> str | None:
    suffixes = {"csv": CSV_SUFFIXES, "parquet": PARQUET_SUFFIXES, "duckdb": DUCKDB_SUFFIXES}
    return next((kind for kind, ends in suffixes.items() if path.lower().endswith(ends)), None)


def resolve_source(source: Any) -> str:
    """The source string, falling back to ``$QAR_DATABASE_URL``; for a frame or an open
    :class:`Source`, its label (``<pandas.DataFrame>``, the masked URL, the path)."""
    if isinstance(source, Source):
        return source.label
    if frames.is_frame(source):
        return frames.frame_label(source)
    if source is not None and not isinstance(source, str | os.PathLike):
        frames.frame_label(source)  # raises the "cannot audit an object of type …" UsageError
    if source:
        return os.fspath(source)
    env = os.environ.get(URL_ENV)
    if env:
        return env
    raise UsageError(f"no source given; name a CSV, Parquet or DuckDB file or a database URL, or set {URL_ENV}")


def one_at_a_time(source: Any) -> str | None:
    """Why ``--jobs`` has no effect on ``source``, the words after "has no effect on" (``a CSV
    file: DuckDB runs one statement at a time ...``), or None where it has one (a server database
    that SQLAlchemy opens: its statements go to ``--jobs`` connections; SQLite's file too) or where
    no source is known. Nothing is opened (:attr:`~qar_sql.engines.dialects.unit.Engine.one_at_a_time`)."""
    engine: Engine | None = None
    if isinstance(source, Source):
        what, engine = "an open source", next((e for e in ENGINES if e.name == source.db.dialect.name), None)
    elif frames.is_frame(source):
        what, engine = "a DataFrame", engine_named("duckdb")
    elif isinstance(source, str | os.PathLike) and os.fspath(source) or os.environ.get(URL_ENV):
        text = os.fspath(source) if source else os.environ[URL_ENV]
        kind = None if is_url(text) else file_kind(text)
        spelled = {"csv": "CSV", "parquet": "Parquet", "duckdb": "DuckDB"}
        what = f"a {spelled[kind]} file" if kind else "this source"
        engine = engine_named("duckdb") if kind else engine_of(text) if is_url(text) else None
    if engine is None or not engine.one_at_a_time:
        return None
    return f"{what}: {engine.one_at_a_time}"


def split_table(table: str) -> tuple[str, ...]:
    """``schema.table`` → (schema, table). A name with a dot that exists as one table is
    looked up before splitting (see :func:`open_source`)."""
    return tuple(table.split(".", 1))


#: The public name of an open source (``qar_sql.Source``, :func:`connect`): a :class:`Session`.
Source = Session


#: What every API function takes as ``source``: a file path or database URL, an open
#: :class:`Source`, None ($QAR_DATABASE_URL), or a pandas or polars DataFrame, pyarrow Table or
#: Dataset or DuckDB relation. Spelled ``Any`` because those libraries are optional (naming their
#: classes would make them dependencies of the type check); the check is :func:`open_source`'s.
SourceLike: TypeAlias = Any


def connect(
    source: SourceLike = None,
    *,
    table: str | None = None,
    delimiter: str | None = None,
    threads: int | None = None,
    null_tokens: Sequence[str] = (),
) -> Source:
    """Open ``source`` once — a file, a DuckDB file, a database URL, a pandas or polars DataFrame,
    a pyarrow Table or Dataset, or a DuckDB relation — for several API calls in a row
    (``null_tokens``: CSV cells read as NULL, as ``--null-token``)."""
    db, relation = open_source(source, table=table, delimiter=delimiter, threads=threads, null_tokens=null_tokens)
    return _session(db, relation, source, table, delimiter, null_tokens)


@contextmanager
def session_of(
    source: SourceLike = None,
    *,
    table: str | None = None,
    delimiter: str | None = None,
    threads: int | None = None,
    all_text: bool = False,
    null_tokens: Sequence[str] = (),
) -> Iterator[Session]:
    """The session a command runs in: ``source`` itself when it is an open :class:`Source` (left
    open for its owner), else ``source`` opened with the source options (:func:`open_source`)
    and closed on exit."""
    if isinstance(source, Session):
        if source.closed:
            raise UsageError(
                f"the source {source.label} is closed (its with block ended, or .close() was called); "
                "open it again with qar_sql.connect(...)"
            )
        open_source(source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens)  # checks
        yield source
        return
    db, relation = open_source(
        source, table=table, delimiter=delimiter, threads=threads, all_text=all_text, null_tokens=null_tokens
    )
    with _session(db, relation, source, table, delimiter, null_tokens) as session:
        yield session


def _session(db: Database, relation: Relation, source: SourceLike, table, delimiter, null_tokens) -> Session:
    """The session of a source just opened: its label (a URL's password masked) and its options."""
    resolved = resolve_source(source)
    label = relation.display if relation.kind == "frame" else mask_source(resolved)
    where = {"source": resolved, "table": table, "delimiter": delimiter, "null_tokens": check_null_tokens(null_tokens)}
    return Session(db, relation, label, where)


def reads_csv(source: str) -> bool:
    """Whether ``source`` (a path or URL) is a CSV file, the one kind the CSV options read."""
    return not is_url(source) and file_kind(source) == "csv"


def check_csv_options(
    source: str, *, all_text: bool = False, delimiter: str | None = None, null_tokens: Sequence[str] = ()
) -> None:
    """The options that read a CSV file refused for any other ``source`` (a file or a URL), where
    they would be ignored."""
    if not reads_csv(source):
        if all_text:
            raise UsageError(
                f"--all-text applies to CSV files, whose column types are guessed; {mask_source(source)!r} "
                "has declared types (cast the columns in a view to compare them as text)"
            )
        if delimiter:
            raise UsageError(
                f"--delimiter applies to CSV files, whose fields it splits; {mask_source(source)!r} has columns "
                "of its own; leave --delimiter out"
            )
        if null_tokens:
            raise UsageError(
                f"--null-token applies to CSV files, whose missing values are written as text; "
                f"{mask_source(source)!r} has NULLs of its own (map the token to NULL in a view: nullif(column, 'NA'))"
            )


def check_source(
    source: Any,
    *,
    table: str | None = None,
    delimiter: str | None = None,
    all_text: bool = False,
    null_tokens: Sequence[str] = (),
    driver: bool = True,
) -> tuple[str, ...]:
    """Every check of ``source`` and its options that needs no connection and no row: the
    options against the kind of source, a file that exists and can be told, a URL that can be
    read and whose driver is installed (nothing connects). :func:`open_source` makes them first;
    ``qar scan`` makes them for every scan before the first scan's first query. Returns the
    null tokens checked. ``driver=False``: the SQLAlchemy engine (the URL read, its driver
    imported) is not made here, as the caller makes it next, with the same errors."""
    null_tokens = check_null_tokens(null_tokens)
    if (isinstance(source, Source) or frames.is_frame(source)) and all_text:
        raise UsageError("--all-text applies to CSV files; a frame or an open source has its own column types")
    if (isinstance(source, Source) or frames.is_frame(source)) and null_tokens:
        raise UsageError("--null-token applies to CSV files; a frame or an open source has its own NULLs")
    if frames.is_frame(source) and delimiter:
        raise UsageError("--delimiter applies to CSV files; a frame has its columns already")
    if isinstance(source, Source):
        if table or delimiter:
            raise UsageError(
                f"the open source {source.label} already names its table; pass table= and delimiter= to connect()"
            )
        return null_tokens
    if frames.is_frame(source):
        return null_tokens
    source = resolve_source(source)
    check_csv_options(source, all_text=all_text, delimiter=delimiter, null_tokens=null_tokens)
    if is_url(source):
        engine = engine_of(source)
        if engine is None or not engine.opener:
            if driver:
                sqlalchemy_engine(source).dispose()  # (made, not connected: its driver is imported)
        elif engine.local_file is not None and (local := engine.local_file(source)):
            _duckdb_file_exists(local)
        return null_tokens
    kind = file_kind(source)
    path = Path(source)
    if not path.exists():
        raise SourceNotFound(f"file {source!r} does not exist; check the path")
    if path.is_dir():
        raise SourceNotFound(f"{source!r} is a folder; name a CSV, Parquet or DuckDB file")
    if not path.is_file():  # a FIFO or a device has size 0 too: "is empty" misled
        raise SourceNotFound(
            f"{source!r} is not a regular file (a pipe or a device); save the data to a file and name that"
        )
    if kind == "duckdb":
        return null_tokens
    if path.stat().st_size == 0:
        raise DataError(f"file {source!r} is empty; audit a file that has a header and rows")
    if kind is None:
        raise UsageError(
            f"cannot tell the format of {source!r} from its name; use a .csv, .tsv, .parquet "
            "or .duckdb file, or a database URL such as postgresql+psycopg://host/db"
        )
    if table:
        raise UsageError(f"--table {table!r} does not apply to the {kind.upper()} file {source!r}")
    return null_tokens


def open_source(
    source: Any,
    *,
    table: str | None = None,
    delimiter: str | None = None,
    threads: int | None = None,
    all_text: bool = False,
    null_tokens: Sequence[str] = (),
) -> tuple[Database, Relation]:
    """Connect to ``source`` and describe the relation to audit. ``all_text`` reads every
    column of a CSV file as text instead of the types DuckDB infers; ``null_tokens`` are the
    CSV cells read as NULL besides the empty one (``NA``, ``?``). Its checks are :func:`check_source`'s."""
    null_tokens = check_source(
        source, table=table, delimiter=delimiter, all_text=all_text, null_tokens=null_tokens, driver=False
    )
    if isinstance(source, Source):
        return source.db, source.relation
    if frames.is_frame(source):
        return _open_frame(source, table, threads)
    source = resolve_source(source)
    if is_url(source):
        engine = engine_of(source)
        if engine is not None and engine.opener:  # a native adapter: no SQLAlchemy dialect runs its SQL
            module, _, function = engine.opener.partition(":")
            # Imported only when such a URL is opened: its driver is an optional extra.
            opener = getattr(importlib.import_module(module), function)
            return opener(source, table, threads)
        return _open_sqlalchemy(source, table)
    kind = file_kind(source)
    if kind == "duckdb":
        return _open_duckdb_file(source, table, threads)
    assert kind is not None  # (check_source refused a file whose kind it cannot tell)
    db = DuckDBDatabase(threads=threads)
    with closed_on_error(db):
        names: Sequence[str] = ()
        if kind == "csv" and null_tokens:
            # The header is not data: a header cell equal to a token would be read as NULL and the
            # column renamed column9; the names come from a read without the tokens.
            plain = file_relation_sql(db.dialect, source, kind, delimiter, True)
            names = [str(r[0]) for r in db.query(f"describe select * from {plain}")]
        reader = file_relation_sql(db.dialect, source, kind, delimiter, all_text, null_tokens, names)
        relation = _file_relation(db, reader, source, kind, delimiter, all_text)
    return db, relation


def glob_literal(path: str) -> str:
    """``path`` as a DuckDB file pattern that matches only that file: DuckDB's readers expand
    ``*``, ``?`` and ``[`` (``x*.csv`` read every matching file); in brackets they are literal."""
    return re.sub(r"([*?\[])", r"[\1]", path)


def _open_frame(frame: Any, table: str | None, threads: int | None) -> tuple[Database, Relation]:
    """An in-memory frame registered (not copied) in an in-memory DuckDB."""
    label = frames.frame_label(frame)
    if table:
        raise UsageError(f"table {table!r} does not apply to a {label}; select the rows and columns in the frame")
    if label.startswith("<polars."):  # DuckDB reads a polars frame through Arrow (pandas needs none)
        require("arrow", f"reading a {label}")
    frames.check_names(frame)
    db = DuckDBDatabase(threads=threads)
    with closed_on_error(db):
        try:
            if frames.is_duckdb_relation(frame):
                db.spool_relation(frame, frames.FRAME_NAME)
            else:
                frames.check_pandas_frame(frame)
                db.con.register(frames.FRAME_NAME, frames.registrable(frame))
        except db._duckdb.Error as exc:
            raise UsageError(f"DuckDB cannot read this {label}: {first_line(exc)}") from exc
        name = db.dialect.quote(frames.FRAME_NAME)
        cols = tuple(r[0] for r in db.query(f"describe select * from {name}"))
    return db, Relation(name, label, cols, "frame")


#: The session temp table a file is read into.
TEMP_TABLE = "qar_source"


def file_relation_sql(
    dialect: Dialect,
    path: str,
    kind: str,
    delimiter: str | None,
    all_text: bool = False,
    null_tokens: Sequence[str] = (),
    names: Sequence[str] = (),
) -> str:
    """DuckDB's reader for a file, with every argument a quoted literal (``all_text``: every CSV
    column as VARCHAR; ``null_tokens``: cells read as NULL besides the empty one; ``names``: the
    columns' names, read from the header without the tokens)."""
    lit = dialect.literal
    if kind == "parquet":
        return f"read_parquet({lit(glob_literal(path))})"
    nulls = "''" if not null_tokens else "[" + ", ".join(["''", *(lit(t) for t in null_tokens)]) + "]"
    args = [lit(glob_literal(path)), "header = true", f"nullstr = {nulls}"]
    if delimiter is not None:
        if len(delimiter.encode()) != 1 and delimiter != "\\t":
            raise UsageError(f"--delimiter {delimiter!r} must be one character, e.g. ';' or '\\t'")
        args.append(f"delim = {lit(delimiter)}")
    # The first line is the header: without skip = 0, DuckDB's sniffer skips lines until the
    # rest looks regular, so a ragged file silently lost its header and first rows.
    args.append("skip = 0")
    if all_text:
        args.append("all_varchar = true")
    if names:
        args.append("names = [" + ", ".join(lit(n) for n in names) + "]")
    return f"read_csv({', '.join(args)})"


#: Delimiters a CSV header is checked for when DuckDB reads it as a single column.
SEPARATORS = (",", ";", "\t", "|")


def _header_line(path: str) -> str | None:
    """The file's first line (at most 1 MB of it), or None if it cannot be read here."""
    lower = path.lower()
    try:
        if lower.endswith(".gz"):
            fh = gzip.open(path, "rt", encoding="utf-8", errors="replace", newline="")
        elif lower.endswith(".zst"):
            return None
        else:
            fh = open(path, encoding="utf-8", errors="replace", newline="")
        with fh:
            return fh.readline(1 << 20).rstrip("\r\n")
    except OSError:
        return None


def _check_header_names(path: str, delimiter: str | None, cols: Sequence[str]) -> None:
    """Refuse a CSV header with two names equal but for case (``Age,age``) or equal: DuckDB's
    names ignore case, so it reads the second as ``age_1``, a name the file never had (as
    :func:`frames.check_names` refuses for a frame). Only a name DuckDB could have made is
    looked into: the header's fields are split by the delimiter that gives DuckDB's count."""
    lowered = [c.lower() for c in cols]
    made = [c for c in lowered if re.fullmatch(r"(.+)_\d+", c) and c.rsplit("_", 1)[0] in lowered]
    header = _header_line(path) if made else None
    if not header:
        return
    given = "\t" if delimiter == "\\t" else delimiter
    for use in [given] if given else SEPARATORS:
        fields = user_files.csv_fields(header, use)
        if fields is None or len(fields) != len(cols):
            continue
        clash = frames.same_name(fields)
        if clash is not None:
            first, name = clash
            both = (
                f"two columns named {name!r}"
                if first == name
                else f"columns {first!r} and {name!r}, one name to the database (its names ignore case)"
            )
            raise DataError(f"the header of {path!r} has {both}; rename one in the file, e.g. to {name + '_2'!r}")
        return


def _explain_csv(db: DuckDBDatabase, path: str, delimiter: str | None) -> None:
    """Raise a clear error when a CSV read as one column (or not at all) is really ragged or
    read with the wrong --delimiter; return when no better explanation is found. A file saved as
    UTF-16 or UTF-32 (Excel's "Unicode text") is named so first: DuckDB reads its NUL bytes as
    text, and the lines that gives were explained as ragged, or as a wrong --delimiter."""
    wide = user_files.wide_encoding(path)
    if wide:
        raise UsageError(f"{path!r} is {wide} text; save it as UTF-8 (e.g. iconv -f {wide} -t utf-8)")
    header = _header_line(path)
    if not header:
        return
    given = "\t" if delimiter == "\\t" else delimiter
    counts = {s: header.count(s) for s in SEPARATORS}
    likely = max(SEPARATORS, key=lambda s: counts[s]) if max(counts.values()) else None
    if given is not None and counts.get(given, header.count(given)) == 0 and likely and likely != given:
        shown, suggest = (f"'{d}'" if d != "'" else repr(d) for d in (delimiter, likely.replace("\t", "\\t")))
        raise UsageError(
            f"--delimiter {shown} does not occur in the header of {path!r} ({header[:80]!r}), so every "
            f"line would be one column; the file seems to use {likely!r}: try --delimiter {suggest} "
            "or leave --delimiter out"
        )
    use = given or likely
    if use is None:
        return
    fields = user_files.csv_fields(header, use)
    if fields is None or len(fields) < 2:
        return
    lit = db.dialect.literal
    columns = "{" + ", ".join(f"'c{i}': 'VARCHAR'" for i in range(len(fields))) + "}"
    strict = (
        f"read_csv({lit(glob_literal(path))}, auto_detect = false, header = false, skip = 1, "
        f"delim = {lit(use)}, quote = '\"', escape = '\"', nullstr = '', columns = {columns})"
    )
    try:
        db.query(f"select count(*) from {strict}")
    except DatabaseError as exc:
        full = str(exc.__cause__ or exc)
        line, found = re.search(r"Line: (\d+)", full), re.search(r"Found: (\d+)", full)
        if not (line and found):
            return
        raise DataError(
            f"{path!r} is ragged: line {line.group(1)} has {found.group(1)} fields where the header has "
            f"{len(fields)} (delimiter {use!r}); give every line {len(fields)} fields (quote values that "
            f"contain {use!r}), or name the right --delimiter"
        ) from exc


def _explain_encoding(path: str, full: str) -> None:
    """DuckDB's first line ("CSV Error on Line: 9") says nothing of the cause; its later lines
    say when the bytes are not UTF-8 (a file saved as Latin-1 or Windows-1252)."""
    if "not utf-8 encoded" not in full.lower():
        return
    line = re.search(r"Line: (\d+)", full)
    where = f"line {line.group(1)} of {path!r}" if line else repr(path)
    raise UsageError(f"{where} is not UTF-8 text; save the file as UTF-8 (e.g. iconv -f cp1252 -t utf-8)")


def _file_relation(
    db: DuckDBDatabase, reader: str, path: str, kind: str, delimiter: str | None, all_text: bool
) -> Relation:
    """The file read by ``reader`` (its :func:`file_relation_sql`, which alone takes the reader's
    options) as a session temp table; ``path``, ``kind`` and ``delimiter`` name it in errors."""
    try:
        described = db.query(f"describe select * from {reader}")
        cols = tuple(r[0] for r in described)
    except DatabaseError as exc:
        if kind == "csv":
            _explain_csv(db, path, delimiter)
            _explain_encoding(path, str(exc.__cause__ or exc))
        hint = "; check its quoting and line endings" if "sniffing" in str(exc) else ""
        raise UsageError(
            f"cannot read {path!r} as {kind.upper()}: {str(exc).rstrip('.') if hint else exc}{hint}"
        ) from exc
    if kind == "csv" and len(cols) == 1 and any(s in cols[0] for s in SEPARATORS):
        _explain_csv(db, path, delimiter)  # one column whose name holds a delimiter: ragged?
    if kind == "csv":
        _check_header_names(path, delimiter, cols)
    # A file is parsed once into a session temp table (memory, spilling to DuckDB's temp
    # folder), not once per statement; the file itself is never changed. DuckDB keeps insertion
    # order, so the temp table's rowid is the row's position in the file (the default key).
    name = TEMP_TABLE
    db.query(f"create temp table {db.dialect.quote(name)} as select * from {reader}")
    inferred = tuple((str(r[0]), str(r[1])) for r in described if kind == "csv" and str(r[1]) != "VARCHAR")
    # A name qar cannot quote is left to the audit's own refusal, which --exclude avoids.
    text = [
        str(r[0]) for r in described if kind == "csv" and str(r[1]) == "VARCHAR" and not unsafe_character(str(r[0]))
    ]
    tokens = () if all_text else numeric_except(db, db.dialect.quote(name), text)
    return Relation(
        db.dialect.quote(name), path, cols, kind, row_order="rowid", inferred=inferred, numeric_except=tokens
    )


#: A text column is "numeric but for a few tokens" when at most this many distinct values do
#: not read as numbers (and at least two distinct ones do): missing-value codes, not categories.
MAX_NULL_TOKENS = 5


def numeric_except(db: DuckDBDatabase, relation: str, columns: Sequence[str]):
    """(column, ((token, rows), ...)) for each text column whose values are numbers but for at
    most :data:`MAX_NULL_TOKENS` distinct tokens (such as ``NA``, ``?``, ``.``), most frequent
    first. One scan of the text columns, then one small GROUP BY per such column."""
    if not columns:
        return ()
    q = db.dialect.quote
    parts = []
    for c in columns:
        x, num = f"t.{q(c)}", f"try_cast(t.{q(c)} as double)"
        # Two different numbers, and few other tokens (approximately: checked exactly below).
        parts += [
            f"min({num}) < max({num})",
            f"approx_count_distinct({x}) filter (where {x} is not null and {num} is null)",
        ]
    row = db.query(f"select {', '.join(parts)} from {relation} as t")[0]
    out = []
    for i, c in enumerate(columns):
        numbers, tokens = bool(row[2 * i]), int(row[2 * i + 1] or 0)
        if numbers and 1 <= tokens <= 2 * MAX_NULL_TOKENS:
            x = f"t.{q(c)}"
            found = db.query(
                f"select {x}, count(*) from {relation} as t where {x} is not null and "
                f"try_cast({x} as double) is null group by {x} order by count(*) desc, {x} "
                f"limit {MAX_NULL_TOKENS + 1}"
            )
            if len(found) <= MAX_NULL_TOKENS:
                out.append((c, tuple((str(v), int(n)) for v, n in found)))
    return tuple(out)


def open_duckdb_url(url: str, table: str | None, threads: int | None):
    """``duckdb:///path``: the DuckDB file at path, read-only."""
    if not url.startswith("duckdb:///"):
        raise UsageError(f"cannot read the DuckDB URL {url!r}; write it as duckdb:///path/to/file.duckdb")
    check_url(url, f"database URL {url!r}")
    return _open_duckdb_file(url[len("duckdb:///") :], table, threads)


def _duckdb_file_exists(path: str) -> None:
    if not Path(path).exists():
        raise SourceNotFound(f"DuckDB database {path!r} does not exist; check the path")


def _open_duckdb_file(path: str, table: str | None, threads: int | None):
    _duckdb_file_exists(path)
    db = DuckDBDatabase(path, threads=threads)
    with closed_on_error(db):
        rows = db.query(
            "select schema_name, table_name from duckdb_tables() where database_name = current_database() "
            "union all select schema_name, view_name from duckdb_views() "
            "where database_name = current_database() and not internal"
        )
        relation, _ = pick_table(db.dialect, path, table, [(s, t) for s, t in rows], "main")
        cols = tuple(r[0] for r in db.query(f"describe select * from {relation.sql}"))
    return db, Relation(relation.sql, relation.display, cols, "table")


def _open_sqlalchemy(url: str, table: str | None):
    db = SQLAlchemyDatabase(url)
    with closed_on_error(db):
        insp = db.inspector()
        default = insp.default_schema_name

        def names(schema):
            try:
                return insp.get_table_names(schema=schema) + insp.get_view_names(schema=schema)
            except db._sa.exc.SQLAlchemyError:
                return []

        # A plain name is looked up in the default schema, like an unqualified query; a dotted
        # name is first an exact table name there, then schema.table split at any of its dots.
        pairs = [(default, n) for n in names(default)]
        parts = (table or "").split(".")
        for schema in sorted({".".join(parts[:i]) for i in range(1, len(parts))} - {default}):
            pairs += [(schema, n) for n in names(schema)]
        relation, (schema, name) = pick_table(db.dialect, db.masked_url, table, pairs, default)
        with warnings.catch_warnings():
            # SQLAlchemy warns about column types it has no class for (point, …); only the
            # names are needed here, and an ungroupable type gets its own message later.
            warnings.simplefilter("ignore", db._sa.exc.SAWarning)
            described = _describe(db, insp, schema, name)
        cols = tuple(c for c, _, _ in described)
        sql = relation.sql
        d = db.dialect
        if d.binary_text and any(text for _, _, text in described):
            # Every command reads text columns through this derived table, so they group, join
            # and sort by code points wherever they are used (see Dialect.binary_text).
            items = ", ".join(
                f"{d.binary_text.format(d.quote(c))} as {d.quote(c)}" if text else d.quote(c)
                for c, _, text in described
            )
            sql = f"(select {items} from {relation.sql})"
        if not d.typeof:
            db.declared_types[sql] = {c: t for c, t, _ in described}
    return db, Relation(sql, relation.display, cols, "table")


def _describe(db: SQLAlchemyDatabase, insp, schema: str, name: str) -> list[tuple[str, str, bool]]:
    """(name, declared type, is text) of every column of a table, in table order."""
    if db.unit is not None and db.unit.describe is not None:
        return db.unit.describe(db, schema, name)
    return [
        (c["name"], getattr(c["type"], "__visit_name__", str(c["type"])), isinstance(c["type"], db._sa.String))
        for c in insp.get_columns(name, schema=schema)
    ]


def column_names(value: Any, option: str) -> tuple[str, ...] | None:
    """Column names as an API caller may give them: a list (or any iterable) of names, or one
    string of comma-separated names as on the command line (``"age,sex"``, not the letters
    a, g, e); None or empty stays None (not given)."""
    if value is None:
        return None
    if isinstance(value, str):
        names = tuple(part.strip() for part in value.split(","))
        if not any(names):
            raise ColumnError(f"{option} {value!r} names no column; write e.g. 'age,sex' or ['age', 'sex']")
        return tuple(n for n in names if n)
    try:
        # A frame's integer labels (pd.read_csv(header=None)) reach the database as their text.
        names = tuple(str(int(n)) if isinstance(n, numbers.Integral) and not isinstance(n, bool) else n for n in value)
    except TypeError:
        names = ()
        bad: Any = value
    else:
        bad = next((n for n in names if not isinstance(n, str)), None)
    if bad is not None:
        raise ColumnError(f"{option} {bad!r} must name columns: a list of names such as ['age', 'sex'] or 'age,sex'")
    return names or None


def listed_once(columns: Sequence[str], option: str) -> None:
    """Refuse a list of columns (``option``'s) that names one twice, naming it."""
    dups = sorted({c for c in columns if list(columns).count(c) > 1})
    if dups:
        raise ColumnError(f"column {dups[0]!r} is listed twice in {option}; list it once")


def select_columns(
    available: Iterable[str], columns: Sequence[str] | str | None, exclude: Sequence[str] | str | None
) -> tuple[str, ...]:
    """The quasi-identifier columns: exactly ``columns`` in the given order, or all columns
    except ``exclude``. Unknown names get a did-you-mean."""
    available = list(available)
    columns, exclude = column_names(columns, "--columns"), column_names(exclude, "--exclude")

    def check(names, option):
        for name in names:
            if name not in available:
                close = difflib.get_close_matches(name, available, n=1, cutoff=0.5)
                # A name with a line break or a bidi override is shown escaped: the message stays one line, as written.
                shown = [repr(c) if unsafe_character(c) else c for c in available[:20]]
                listed = ", ".join(shown) + (", …" if len(available) > 20 else "")
                advice = f"did you mean {close[0]!r} (columns: {listed})?" if close else f"the columns are: {listed}"
                raise ColumnError(f"column {name!r} (in {option}) not found; {advice}")

    if columns:
        check(columns, "--columns")
        listed_once(columns, "--columns")
    check(exclude or (), "--exclude")
    return tuple(c for c in (columns or available) if c not in set(exclude or ()))
