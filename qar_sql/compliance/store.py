"""The results store: apply the migrations in ``migrations/`` and record audit runs.

A store is a DuckDB file (default ``qar_results.duckdb``; opened read-write, and only for the
moment of each write, so scans in other processes can share it) or a PostgreSQL URL reached
through SQLAlchemy. It may be a different database from the one audited.

Migrations are ``NNNN_slug.sql`` files (a ``NNNN_slug.<dialect>.sql`` sibling wins for that
engine), applied in version order, each with its tracking row in one transaction. The tracking
table keeps every applied file's SHA-256: an applied migration whose file later changed stops
every store command, loudly.

A run is recorded in two steps so that it can never look complete when it is not: a
``running`` row is committed before the audit starts; the per-QI results, the fit and the
``complete`` status are committed together in one transaction afterwards. An error or a lost
connection marks the row ``failed``, Ctrl-C ``interrupted``. A process killed outright leaves it
``running``; the run's process id, host and heartbeat (:mod:`.liveness`) let the next run mark
it ``interrupted``. Results that cannot be written at the end are retried with back-off, then
saved to a side file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import math
import os
import re
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from qar_sql import user_files
from qar_sql.compliance import liveness
from qar_sql.engines.database import check_store_engine, check_url, connect_failure, first_line
from qar_sql.engines.render import migrations_dir
from qar_sql.engines.secrets import mask_source, scrub, secret_values
from qar_sql.engines.source import DUCKDB_SUFFIXES, is_url, resolve_source
from qar_sql.errors import DatabaseError, DataError, QarError, SourceNotFound, UsageError
from qar_sql.guard import local_file, same_file
from qar_sql.measures.audit import audit as _audit
from qar_sql.parameters.tail import AuditParams
from qar_sql.results import AuditResult, MigrateResult, MigrationState, QIStats, from_plain, to_plain
from qar_sql.stats.evt import TailFit
from qar_sql.version import __version__

DEFAULT_STORE = "qar_results.duckdb"
STORE_ENV = "QAR_STORE"
HASH_SECRET_ENV = "QAR_HASH_SECRET"
TRACKING = "qar_schema_migrations"
#: Key of the PostgreSQL advisory lock that serialises concurrent ``qar migrate`` runs.
_PG_LOCK = 724_011_355
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+?)(?:\.([a-z0-9_]+))?\.sql$")
#: How long a writer waits for a DuckDB store file that another process holds.
DUCKDB_LOCK_WAIT = 15.0
#: How long each attempt to record a finished run waits for that lock: the results are in hand,
#: so a store held by another process costs seconds (a side file), not minutes of silence.
FINAL_LOCK_WAIT = 2.0


class MigrationError(DatabaseError):
    """The store's migrations disagree with the migration files (edited, unknown, pending)."""


class RunNotRunning(DatabaseError):
    """The run's row is no longer ``running`` (another process marked it ``interrupted``)."""


class NotRecorded(DatabaseError):
    """A finished run whose results could not be written to the store: they are in a side file
    (named in the message), and ``result`` holds them, so that the command still prints them."""

    def __init__(self, message: str, result: AuditResult):
        super().__init__(message)
        self.result = result


# --------------------------------------------------------------------------------------------
# Migration files


@dataclass(frozen=True)
class Migration:
    """One migration file chosen for a dialect."""

    version: str  # "0001"
    name: str  # "0001_runs"
    path: Path
    checksum: str  # SHA-256 of the file's bytes

    def statements(self) -> list[str]:
        """The statements, split at ``;`` ending a line (comment lines dropped)."""
        text = self.path.read_text(encoding="utf-8")
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("--")]
        parts = re.split(r";[ \t]*(?:--[^\n]*)?$", "\n".join(lines), flags=re.MULTILINE)
        return [p.strip() for p in parts if p.strip()]


def discover(dialect: str, folder: Path | None = None) -> list[Migration]:
    """The migrations for ``dialect`` in version order (a dialect sibling replaces the default)."""
    folder = Path(folder) if folder is not None else migrations_dir()
    chosen: dict[str, tuple[str, Path, bool]] = {}
    for path in sorted(folder.glob("*.sql")):
        m = _FILE.match(path.name)
        if not m:
            raise MigrationError(
                f"migration file {path.name!r} is not named NNNN_slug.sql or NNNN_slug.<dialect>.sql; rename it"
            )
        version, slug, file_dialect = m.groups()
        if file_dialect is not None and file_dialect != dialect:
            continue
        name = f"{version}_{slug}"
        if version in chosen and chosen[version][0] != name:
            raise MigrationError(
                f"migrations {chosen[version][0]!r} and {name!r} share version {version}; "
                "give each migration its own number"
            )
        if version in chosen and chosen[version][2] and file_dialect is None:
            continue  # the dialect sibling already won
        chosen[version] = (name, path, file_dialect is not None)
    return [
        Migration(version, name, path, hashlib.sha256(path.read_bytes()).hexdigest())
        for version, (name, path, _) in sorted(chosen.items())
    ]


# --------------------------------------------------------------------------------------------
# Connections


def resolve_store(url: str | None) -> str:
    """The store URL: as given, else ``$QAR_STORE``, else ``qar_results.duckdb``."""
    return url or os.environ.get(STORE_ENV) or DEFAULT_STORE


def scan_store(given: str | None, configured: str | None, record: bool | None) -> str | None:
    """Where a scan records its runs, or None: nothing is written unless asked, as a linter or a
    data-quality check writes nothing unasked. ``given``: the store asked for (``--store URL``;
    ``""``: ``--store`` alone, i.e. the config's ``[store]``, else ``$QAR_STORE``, else the default
    store); ``configured``: the config's ``[store]``; ``record``: False never records (``--no-store``), True always, None
    only where a store is given or configured. ``$QAR_STORE`` alone switches nothing on (as for
    ``qar audit``): it names the store that ``--store`` alone uses."""
    if record is False:
        return None
    if given or configured:
        return given or configured
    return resolve_store(None) if record or given is not None else None


def check_store(url: str | None) -> None:
    """A store (``None``, ``""``: the default) that is a DuckDB file's name or a database URL,
    checked before any work by a command that only reads it: a DuckDB file must exist."""
    with Store(url or None) as st:
        st.require()
        with st.transaction(read_only=True) as tx:  # (another tool's qar_runs: refused before the work)
            _check_ours(tx, st.display)


def _duckdb_path(url: str) -> str | None:
    if url[:10].lower() == "duckdb:///" and url[10:] not in ("", ":memory:"):
        check_url(url, f"store URL {url!r}")
        return url[10:]
    if url.lower().startswith("duckdb:"):  # (duckdb:///, duckdb:///:memory:, duckdb://: DuckDB's memory, gone at exit)
        raise UsageError(
            f"store {url!r} names no DuckDB file, and a database in memory keeps no results; write "
            f"duckdb:///path/to/store.duckdb or the path alone, e.g. --store {DEFAULT_STORE}"
        )
    if not is_url(url):
        if not url.lower().endswith(DUCKDB_SUFFIXES):
            raise UsageError(
                f"store {url!r} is neither a DuckDB file (.duckdb) nor a database URL; "
                f"use e.g. {DEFAULT_STORE} or postgresql+psycopg://host/db"
            )
        return url
    return None


def _check_writable(path: str) -> None:
    """Refuse a DuckDB store path that cannot become a file (before the audit's work): a folder,
    a device, or a file in a folder that does not exist."""
    if os.path.exists(path) and not os.path.isfile(path):
        kind = "a folder" if os.path.isdir(path) else "not a regular file"
        raise UsageError(f"the store {path!r} is {kind}; point --store at a .duckdb file, e.g. --store {DEFAULT_STORE}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(
            f"the store {path!r} cannot be created: {folder!r} {'is a file, not a folder' if os.path.exists(folder) else 'does not exist'}; create the folder or point "
            f"--store elsewhere, e.g. --store {DEFAULT_STORE}"
        )
    if not os.access(folder, os.W_OK):  # DuckDB writes a .wal beside the file at each commit
        raise UsageError(
            f"cannot write the store {path!r}: the folder {folder!r} is read-only, and DuckDB writes a "
            f".wal file beside the store; point --store at a file in a folder you can write, e.g. "
            f"--store {DEFAULT_STORE}"
        )


class _Tx:
    """One transaction on a store: ``execute`` takes SQL with ``:name`` parameters."""

    dialect: str

    def execute(self, sql: str, params: dict | None = None) -> list[tuple]:  # pragma: no cover
        raise NotImplementedError

    def insert(self, table: str, columns: Sequence[str], rows: Sequence[tuple]) -> None:
        # Multi-row VALUES in chunks: an executemany costs DuckDB a round trip per row.
        for i in range(0, len(rows), 500):
            chunk = rows[i : i + 500]
            values = ", ".join("(" + ", ".join(f":{c}_{j}" for c in columns) + ")" for j in range(len(chunk)))
            params = {f"{c}_{j}": v for j, row in enumerate(chunk) for c, v in zip(columns, row, strict=True)}
            self.execute(f"insert into {table} ({', '.join(columns)}) values {values}", params)

    def execute_ddl(self, sql: str) -> None: ...

    def lock(self) -> None:
        """Serialise migrators (PostgreSQL); a DuckDB file has one writer at a time anyway."""

    def has_table(self, name: str) -> bool:
        rows = self.execute(
            "select count(*) from information_schema.tables "
            "where table_schema = current_schema() and table_name = :name",
            {"name": name},
        )
        return bool(rows[0][0])


class _DuckTx(_Tx):
    dialect = "duckdb"

    def __init__(self, con):
        self.con = con

    def execute(self, sql, params=None):
        sql = re.sub(r"(?<![:\w]):(\w+)", r"$\1", sql)
        return self.con.execute(sql, params or {}).fetchall()

    def execute_ddl(self, sql):
        self.con.execute(sql)


class _SATx(_Tx):
    def __init__(self, conn, dialect):
        import sqlalchemy as sa

        self.sa = sa
        self.conn = conn
        self.dialect = dialect

    def execute(self, sql, params=None):
        result = self.conn.execute(self.sa.text(sql), params or {})
        return [tuple(r) for r in result.fetchall()] if result.returns_rows else []

    def execute_ddl(self, sql):
        self.conn.exec_driver_sql(sql)

    def lock(self):
        if self.dialect == "postgresql":
            self.conn.exec_driver_sql(f"select pg_advisory_xact_lock({_PG_LOCK})")


class Store:
    """A results store. Each :meth:`transaction` opens its own connection and closes it."""

    def __init__(self, url: str | None = None):
        self.url = resolve_store(url)
        self.display = mask_source(self.url)
        self.path = _duckdb_path(self.url)
        self.engine = None
        self._con = None  # the DuckDB connection, held between release() calls
        self._con_ro = False
        self.lock_wait = DUCKDB_LOCK_WAIT  # seconds to wait for a DuckDB file another process holds
        if self.path is not None:
            self.dialect = "duckdb"
        else:
            import sqlalchemy as sa

            self._sa = sa
            check_store_engine(
                self.url, f"store {self.display}", f"--store {DEFAULT_STORE} or postgresql+psycopg://host/db"
            )
            check_url(self.url, f"store URL {self.display}")
            try:
                self.engine = sa.create_engine(self.url, poolclass=sa.pool.NullPool)
            except ModuleNotFoundError as exc:
                raise UsageError(
                    f"the database driver for store {self.display} is not installed ({exc.name}); "
                    "install it, e.g. pip install 'qar-sql[postgres]'"
                ) from exc
            except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError) as exc:
                raise UsageError(
                    f"cannot use store URL {self.display}: {first_line(exc)}; write it as "
                    "dialect+driver://user:password@host/database or name a .duckdb file"
                ) from exc
            self.dialect = self.engine.dialect.name

    def exists(self) -> bool:
        return self.path is None or os.path.exists(self.path)  # False, not OSError, for a name too long

    def require(self) -> None:
        """Refuse (exit 2) a DuckDB store file that does not exist, for a command that only reads
        it: a misspelt name read as an empty store said "no runs yet", and must not be made."""
        if self.exists():
            return
        default = " (the default store: name one with --store or $QAR_STORE)" if self.url == DEFAULT_STORE else ""
        raise SourceNotFound(
            f"the results store {self.display!r} does not exist{default}; check the path, or record a run "
            "there first with qar audit … --store or qar scan --store"
        )

    @contextlib.contextmanager
    def transaction(self, *, read_only: bool = False) -> Iterator[_Tx]:
        """A transaction that commits when the block ends and rolls back on any exception
        (KeyboardInterrupt included)."""
        if self.path is not None:
            with self._duck(read_only) as con:
                con.execute("begin transaction")
                try:
                    yield _DuckTx(con)
                except BaseException:
                    con.execute("rollback")
                    raise
                con.execute("commit")
            return
        sa = self._sa
        try:
            conn = self.engine.connect()  # type: ignore[union-attr]
        except sa.exc.DBAPIError as exc:
            raise connect_failure(exc, f"store {self.display}") from exc
        try:
            with conn.begin():
                if read_only and self.dialect == "postgresql":
                    conn.exec_driver_sql("set transaction read only")
                try:
                    yield _SATx(conn, self.dialect)
                except sa.exc.DBAPIError as exc:
                    raise DatabaseError(
                        f"store {self.display} failed a statement: {first_line(exc.orig or exc)}"
                    ) from exc
        except sa.exc.DBAPIError as exc:  # the commit itself failed (e.g. connection lost)
            raise DatabaseError(f"store {self.display} failed to commit: {first_line(exc.orig or exc)}") from exc
        finally:
            conn.close()

    @contextlib.contextmanager
    def _duck(self, read_only: bool):
        """The DuckDB connection, opened on first use and kept until :meth:`release`."""
        import duckdb

        if self._con is not None and self._con_ro and not read_only:
            self.release()
        if self._con is None:
            self._con = self._open_duck(read_only)
            self._con_ro = read_only
        try:
            yield self._con
        except duckdb.Error as exc:
            raise DatabaseError(f"store {self.path!r} failed a statement: {first_line(exc)}") from exc

    def _open_duck(self, read_only: bool):
        import duckdb

        not_duckdb = UsageError(
            f"the store {self.path!r} is not a DuckDB database file; point --store at a "
            f"store qar made or a new file name, e.g. --store {DEFAULT_STORE}"
        )
        path = str(self.path)
        if user_files.foreign_file(path):
            raise not_duckdb
        if not read_only:
            _check_writable(path)
        deadline = time.monotonic() + self.lock_wait
        while True:
            try:
                return duckdb.connect(self.path, read_only=read_only)  # type: ignore[arg-type]
            except duckdb.IOException as exc:
                if "not a valid DuckDB database" in str(exc):
                    raise not_duckdb from exc
                # Another process holds the file: writes are short, so wait for our turn.
                if "lock" in str(exc).lower() and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                if not read_only and "lock" not in str(exc).lower():
                    # The file cannot be made there (a read-only folder, /proc): the path is wrong.
                    raise UsageError(
                        f"cannot write the store {self.path!r} ({first_line(exc)}); point --store at a "
                        f"file in a folder you can write, e.g. --store {DEFAULT_STORE}"
                    ) from exc
                raise DatabaseError(f"cannot open store {self.path!r}: {first_line(exc)}") from exc
            except duckdb.Error as exc:
                raise DatabaseError(f"cannot open store {self.path!r}: {first_line(exc)}") from exc

    def release(self) -> None:
        """Close the DuckDB file so other processes can write to it (e.g. during a long audit)."""
        if self._con is not None:
            try:
                self._con.close()
            finally:
                self._con = None

    def close(self) -> None:
        self.release()
        if self.engine is not None:
            self.engine.dispose()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


@contextlib.contextmanager
def using(store: str | Store | None) -> Iterator[Store]:
    """A store for one operation: closed afterwards if made here, else only released."""
    st = store if isinstance(store, Store) else Store(store)
    try:
        yield st
    finally:
        st.release() if st is store else st.close()


# --------------------------------------------------------------------------------------------
# Migrating


_TRACKING_DDL = (
    f"create table if not exists {TRACKING} ("
    "version text primary key, name text not null, checksum text not null, "
    "applied_at timestamp not null, qar_version text not null)"
)


#: The tables qar's migrations make (migrations/*.sql), and the tracking table's columns: one of
#: them in a store without qar's tracking rows (or a tracking table without those columns) is
#: another tool's, which migrating failed on ("Table with name qar_runs already exists", exit 3,
#: after creating the tracking table in the file) and reading read as qar's.
TABLES = ("qar_runs", "qar_qi_results", "qar_fits", "qar_top_records", "qar_run_results")
TRACKING_COLUMNS = ("version", "name", "checksum", "applied_at")


def _check_ours(tx: _Tx, display: str) -> None:
    """Refuse (exit 2) a store holding a qar table that no qar migration made."""
    if tx.dialect == "postgresql" and tx.execute("select current_schema()")[0][0] is None:
        # (a search_path naming no schema that exists, ?options=-csearch_path%3Dqar before the
        # schema was made: PostgreSQL's "no schema has been selected to create in", exit 3)
        path = tx.execute("show search_path")[0][0]
        raise UsageError(
            f"store {display}: no schema of its search_path ({path}) exists, so the store has nowhere to be; "
            "create the schema first (create schema NAME) or name an existing one in ?options=-csearch_path%3DNAME"
        )
    fix = "it is not a qar results store; point --store (or [store] url) at another DuckDB file or database"
    if tx.has_table(TRACKING):
        columns = {
            str(r[0]).lower()
            for r in tx.execute(
                "select column_name from information_schema.columns "
                "where table_schema = current_schema() and table_name = :name",
                {"name": TRACKING},
            )
        }
        missing = [c for c in TRACKING_COLUMNS if c not in columns]
        if missing:
            raise UsageError(
                f"store {display} has a table {TRACKING} without the column {missing[0]} qar writes; {fix}"
            )
        if tx.execute(f"select count(*) from {TRACKING}")[0][0]:
            return
    for table in TABLES:
        if tx.has_table(table):
            raise UsageError(
                f"store {display} already has a table {table} that no qar migration made (no {TRACKING} row records "
                f"one); {fix}"
            )


def _applied(tx: _Tx) -> dict[str, tuple[str, str, datetime]]:
    if not tx.has_table(TRACKING):
        return {}
    rows = tx.execute(f"select version, name, checksum, applied_at from {TRACKING} order by version")
    return {v: (n, c, a) for v, n, c, a in rows}


def _applied_in(store: Store, *, read_only: bool) -> dict[str, tuple[str, str, datetime]]:
    """The store's applied migrations; none for a store not created yet."""
    if not store.exists():
        return {}
    with store.transaction(read_only=read_only) as tx:
        _check_ours(tx, store.display)
        return _applied(tx)


def _states(files: list[Migration], applied: dict) -> list[MigrationState]:
    out = []
    by_version = {m.version: m for m in files}
    for version in sorted(set(by_version) | set(applied)):
        if version not in applied:  # then it is one of the files
            pending = by_version[version]
            out.append(MigrationState(version, pending.name, "pending", pending.checksum, None))
            continue
        m = by_version.get(version)
        name, checksum, at = applied[version]
        state = "unknown" if m is None else "changed" if (m.checksum, m.name) != (checksum, name) else "applied"
        out.append(MigrationState(version, name, state, checksum, at))
    return out


def _guard(states: list[MigrationState], store: Store) -> None:
    """Stop on an applied migration whose file changed, or one this qar-sql does not know."""
    for s in states:
        if s.state == "changed":
            raise MigrationError(
                f"migration {s.name} was applied to store {store.display} but its file has "
                "changed since (checksum differs); restore the original file and put the change "
                "in a new migration"
            )
        if s.state == "unknown":
            raise MigrationError(
                f"store {store.display} has migration {s.name}, which this qar-sql "
                f"{__version__} does not know; upgrade qar-sql"
            )


def status(store: str | Store | None = None, *, folder: Path | None = None) -> MigrateResult:
    """The migrations and their state, without writing anything (``qar migrate --status``)."""
    with using(store) as st:
        files = discover(st.dialect, folder)
        return MigrateResult(st.display, st.dialect, (), tuple(_states(files, _applied_in(st, read_only=True))))


def migrate(store: str | Store | None = None, *, to: str | None = None, folder: Path | None = None) -> MigrateResult:
    """Apply the pending migrations (up to version ``to``), each with its tracking row in one
    transaction. Safe to run from several processes at once on PostgreSQL."""
    with using(store) as st:
        files = every = discover(st.dialect, folder)
        if to is not None:
            to = str(to).split("_", 1)[0]
            if to not in {m.version for m in files}:
                known = ", ".join(m.name for m in files) or "none"
                raise UsageError(f"--to {to!r} is not a migration version; choose one of: {known}")
            files = [m for m in files if m.version <= to]
            past = sorted(v for v in _applied_in(st, read_only=True) if v > to)
            if past:  # (nothing to apply: the option would be ignored)
                raise UsageError(
                    f"store {st.display} is at migration {past[-1]} already, past --to {to!r}; migrations only go "
                    "forward: leave --to out (a $QAR_TO sets it too)"
                )
        with st.transaction() as tx:
            tx.lock()
            _check_ours(tx, st.display)  # (before the tracking table is made in another tool's file)
            tx.execute_ddl(_TRACKING_DDL)
        done = []
        for m in files:
            with st.transaction() as tx:
                tx.lock()  # held until commit: a concurrent migrator waits, then sees it applied
                applied = _applied(tx)
                # (against every file: one applied after --to is known, not "unknown")
                _guard(_states(every, applied), st)
                if m.version in applied:
                    continue
                for sql in m.statements():
                    tx.execute_ddl(sql)
                tx.execute(
                    f"insert into {TRACKING} (version, name, checksum, applied_at, qar_version) "
                    "values (:version, :name, :checksum, :at, :qv)",
                    {"version": m.version, "name": m.name, "checksum": m.checksum, "at": _now(), "qv": __version__},
                )
            done.append(m.name)
        with st.transaction(read_only=True) as tx:
            states = _states(discover(st.dialect, folder), _applied(tx))
        return MigrateResult(st.display, st.dialect, tuple(done), tuple(states))


def ensure_ready(store: Store) -> None:
    """Before writing a run: a brand-new store is migrated on the spot; an existing one must be
    fully migrated (``qar migrate``) and unchanged."""
    files = discover(store.dialect)
    applied = _applied_in(store, read_only=False)  # read-write: the run's first write reuses the connection
    if not applied:
        migrate(store)
        return
    states = _states(files, applied)
    _guard(states, store)
    pending = [s.name for s in states if s.state == "pending"]
    if pending:
        raise MigrationError(
            f"store {store.display} needs migration {', '.join(pending)}; run: qar migrate --store {store.display}"
        )


# --------------------------------------------------------------------------------------------
# Recording runs


_now = liveness.now  # naive UTC, as every timestamp of the store


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def hash_secret(secret_file: str | None = None) -> str:
    """The secret for hashed keys: the content of ``secret_file`` (``--hash-secret-file``), else
    ``$QAR_HASH_SECRET``. Refused when empty: an HMAC without a secret is a plain function of the
    key, and small keys (record numbers 1…50,000) are recovered by hashing every candidate."""
    if secret_file:
        # (as written, no byte-order mark dropped: the secret is its bytes; a pipe: <(vault read …))
        secret = user_files.read_text(secret_file, "--hash-secret-file", encoding="utf-8", pipes=True)
        secret = secret.rstrip("\r\n")
    else:
        secret = os.environ.get(HASH_SECRET_ENV, "")
    if not secret:
        raise UsageError(
            f"--hash-keys needs a secret: export {HASH_SECRET_ENV}=… or pass --hash-secret-file FILE. "
            "Without one a stored hash is reversible: keys such as record numbers are recovered in "
            "under a second by hashing every candidate"
        )
    return secret


def hash_key(key: Any, secret: str) -> str:
    """HMAC-SHA256 of the key's text under ``secret`` (see :func:`hash_secret`), in hex."""
    if not secret:
        raise UsageError("hashing a key needs a secret (see hash_secret)")
    return hmac.new(secret.encode(), str(key).encode(), hashlib.sha256).hexdigest()


#: The columns of a run's first row (start_run), in the order of its values.
_RUN_START = tuple(
    "run_id started_at scan_name source table_name columns parameters qar_version status pid host heartbeat_at".split()
)


def start_run(
    store: Store,
    *,
    source: str | None,
    table: str | None,
    columns: Sequence[str] | None,
    parameters: dict,
    scan_name: str | None = None,
) -> str:
    """Commit a ``running`` row and return its run id."""
    run_id, now = str(uuid.uuid4()), _now()
    row: tuple[Any, ...] = (run_id, now, scan_name, mask_source(source) if source else "", table)
    row += (json.dumps(list(columns)) if columns else None, json.dumps(parameters, sort_keys=True), __version__)
    row += ("running", os.getpid(), liveness.host(), now)
    with store.transaction() as tx:
        tx.insert("qar_runs", _RUN_START, [row])
    return run_id


def complete_run(
    store: Store,
    run_id: str,
    result: AuditResult,
    *,
    seconds: float | None = None,
    top_records: Sequence[tuple[Any, float]] | None = None,
    hash_keys: bool = False,
    hash_secret_value: str | None = None,
    sections: Mapping[str, Any] | None = None,
) -> None:
    """Write the results, the fit and the ``complete`` status in one transaction. With
    ``hash_keys`` the top records' keys are stored as HMACs under ``hash_secret_value`` (default
    :func:`hash_secret`). Every number of the run goes to ``qar_run_results`` as JSON: the
    audit's and ``sections`` (other report inputs as JSON data, e.g. ``{"records": …}``)."""
    keys = _stored_keys(top_records, hash_keys, hash_secret_value)
    numbers = json.dumps({"audit": to_plain(_without_values(result)), **(sections or {})}, allow_nan=False)
    f = result.fit
    qi_rows = [
        (run_id, q.index, json.dumps(list(q.columns)), q.distinct, q.singletons, float(q.theta), q.min_class_size)
        for q in result.qis
        if not q.pruned  # (a pruned QI has no θ; its bounds are in the run's JSON)
    ]
    with store.transaction() as tx:
        # The run row first: DuckDB refuses to update a row that rows inserted earlier in
        # the same transaction reference (its foreign keys are checked eagerly).
        updated = tx.execute(
            "update qar_runs set status = 'complete', finished_at = :at, duration_seconds = :secs, "
            "source = :source, table_name = :table, columns = :columns, engine = :engine, "
            "engine_version = :ev, row_count = :rows, n_qi = :nqi, risk = :risk, warnings = :warn "
            "where run_id = :id and status = 'running' returning run_id",
            {
                "at": _now(),
                "secs": seconds if seconds is not None else result.seconds,
                "source": mask_source(result.source),
                "table": result.table,
                "columns": json.dumps(list(result.columns)),
                "engine": result.engine,
                "ev": result.engine_version,
                "rows": result.rows,
                "nqi": result.n_qi,
                "risk": _finite(result.risk),
                "warn": json.dumps(list(result.warnings)),
                "id": run_id,
            },
        )
        if not updated:
            raise RunNotRunning(f"run {run_id} is no longer 'running' in store {store.display}; it was not recorded")
        tx.insert(
            "qar_qi_results",
            ("run_id", "qi_index", "columns", "distinct_count", "singletons", "theta", "min_class_size"),
            qi_rows,
        )
        if f is not None:
            tx.insert(
                "qar_fits",
                ("run_id", "u", "xi", "beta", "n_exceedances", "risk", "n_qi", "n_clipped"),
                [(run_id, f.u, f.xi, f.beta, f.n_exceedances, f.risk, f.n_qi, f.n_clipped)],
            )
        if tx.has_table("qar_run_results"):  # (a store migrated up to 0004; ensure_ready sees to it)
            tx.insert("qar_run_results", ("run_id", "results"), [(run_id, numbers)])
        if keys:
            tx.insert(
                "qar_top_records",
                ("run_id", "rank", "record_key", "key_hashed", "contribution"),
                [(run_id, i, key, bool(hash_keys), c) for i, (key, c) in enumerate(keys, 1)],
            )


def _stored_keys(top_records: Sequence[tuple[Any, float]] | None, hash_keys: bool, secret: str | None) -> list:
    """The top records as stored: (each key's text, or with ``hash_keys`` its HMAC under
    ``secret``, default :func:`hash_secret`; the contribution)."""
    if hash_keys and top_records:
        secret = secret or hash_secret()
    return [(hash_key(k, secret or "") if hash_keys else str(k), float(c)) for k, c in top_records or ()]


def _without_values(result: AuditResult) -> AuditResult:
    """The result without the data's own values (the uniqueness measures' most exposed value
    combinations): the store keeps numbers about the table, not its rare values."""
    u = result.uniqueness
    if u is None:
        return result

    def strip(qis):
        return tuple(replace(q, most_exposed=()) for q in qis)

    scenarios = tuple(replace(sc, qis=strip(sc.qis)) for sc in u.scenarios)
    return replace(result, uniqueness=replace(u, qis=strip(u.qis), scenarios=scenarios))


def fail_run(store: Store, run_id: str, error: str, *, seconds: float | None = None, status: str = "failed") -> None:
    """End a ``running`` run as ``failed`` (an error) or ``interrupted`` (Ctrl-C)."""
    if status not in ("failed", "interrupted"):
        raise ValueError(f"status {status!r}: use 'failed' or 'interrupted'")
    with store.transaction() as tx:
        tx.execute(
            "update qar_runs set status = :status, finished_at = :at, duration_seconds = :secs, "
            "error = :error where run_id = :id and status = 'running'",
            {"status": status, "at": _now(), "secs": seconds, "error": error[:2000], "id": run_id},
        )


def describe_error(exc: BaseException) -> str:
    """One line for the ``error`` column."""
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted"
    if isinstance(exc, QarError):
        return str(exc)
    return f"{type(exc).__name__}: {first_line(exc)}"


def _fail_quietly(store: Store, run_id: str, exc: BaseException, started: float, secrets) -> None:
    """Mark the run failed; if even that is impossible (store gone) it stays 'running', which
    is never mistaken for complete."""
    status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
    with contextlib.suppress(BaseException):  # the original exception is what the caller must see
        fail_run(
            store, run_id, scrub(describe_error(exc), secrets), seconds=time.perf_counter() - started, status=status
        )


def recorded_audit(
    store: str | Store | None,
    source: str | None = None,
    *,
    scan_name: str | None = None,
    secrets: Sequence[str] = (),
    top_records=None,
    hash_keys: bool = False,
    hash_secret_value: str | None = None,
    store_in_source: bool = False,
    sections=None,
    **audit_kwargs,
) -> AuditResult:
    """:func:`qar_sql.measures.audit` with the run recorded in ``store``: a ``running`` row first, then
    results and ``complete`` in one transaction; ``failed`` on any exception, which is re-raised.
    ``sections``: a callable of the result giving other report inputs to keep with its numbers
    (:func:`complete_run`), called once the run is done."""
    with using(store) as st:
        if not store_in_source:
            refuse_store_in_source(st, source)
        made = not st.exists()
        ensure_ready(st)
        liveness.mark_interrupted(st)  # runs whose process died (kill -9) stop looking 'running'
        started = time.perf_counter()
        secrets = [*secrets, *secret_values(resolve_source(source))]
        defaults = {f.name: f.default for f in fields(AuditParams)}  # (the audit's, to compare runs by)
        parameters = {k: audit_kwargs.get(k, defaults[k]) for k in ("p", "alpha", "pi_u", "pwm", "k")}
        run_id = start_run(
            st,
            source=scrub(mask_source(resolve_source(source)), secrets),
            table=audit_kwargs.get("table"),
            columns=audit_kwargs.get("columns"),
            parameters=parameters,
            scan_name=scan_name,
        )
        st.release()  # a DuckDB store file stays free for other processes during the audit
        try:
            with liveness.Heartbeat(lambda: Store(st.url), run_id):
                runner = audit_kwargs.pop("runner", None)
                if runner is not None:  # record-level commands: (AuditResult, [(key, contribution)])
                    result, top_records = runner()
                else:
                    # the store keeps every QI's θ: exact unless the caller asks for --prune auto
                    result = _audit(source, **{"prune": "off", **audit_kwargs})
            tops = top_records(result) if callable(top_records) else top_records
            more = sections(result) if sections is not None else None
        except BaseException as exc:
            if not (made and isinstance(exc, UsageError) and _unmade(st, run_id)):
                _fail_quietly(st, run_id, exc, started, secrets)
            raise
        seconds = time.perf_counter() - started
        _complete_or_save(st, run_id, result, seconds, tops, hash_keys, hash_secret_value, more)
        return result


def _unmade(st: Store, run_id: str) -> bool:
    """Remove the DuckDB store file this run made, once the run is refused (a column, table or
    source misnamed: exit 2), so that a refusal leaves no file behind; only while its one run is
    this one (another process may have recorded since). True when removed."""
    if st.path is None:
        return False
    try:
        with st.transaction(read_only=True) as tx:
            others = tx.execute("select count(*) from qar_runs where run_id <> :id", {"id": run_id})[0][0]
        st.release()
        if others:
            return False
        for path in (st.path, f"{st.path}.wal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
    except (QarError, OSError):
        return False
    return True


def refuse_store_in_source(
    st: Store, source: str | None, *, also: str = ", or pass --store-in-source to write the results into it on purpose"
) -> None:
    """Audits never write to what they audit: a DuckDB store that is the audited file is
    refused (before the store is migrated) unless the caller says so; ``also``: the other fix
    the message offers (qar scan has no --store-in-source)."""
    if st.path is None:
        return
    path = local_file(resolve_source(source))
    if path and same_file(path, st.path):  # (also a hard link to it: a real path differs)
        raise UsageError(
            f"the results store {st.display!r} is the audited database itself, and audits never write to "
            f"what they audit; point --store at another file (e.g. qar_results.duckdb){also}"
        )


def _complete_or_save(
    st: Store, run_id: str, result: AuditResult, seconds: float, tops, hash_keys, secret, more
) -> None:
    """:func:`complete_run`, tried again after each of :data:`liveness.RECORD_RETRY_DELAYS` while
    the store refuses (locked by another process, unreachable); then the results go to a side
    file, and the error says where. Finished work is never thrown away."""
    delays = list(liveness.RECORD_RETRY_DELAYS)
    st.lock_wait = min(st.lock_wait, FINAL_LOCK_WAIT)
    try:
        while True:
            try:
                complete_run(
                    st, run_id, result, seconds=seconds, top_records=tops, hash_keys=hash_keys, hash_secret_value=secret,
                    sections=more,
                )  # fmt: skip
                return
            except RunNotRunning as exc:
                error: DatabaseError = exc
                break
            except DatabaseError as exc:
                error = exc
                st.release()
                if not delays:
                    break
                time.sleep(delays.pop(0))
        path = liveness.write_side_file(
            liveness.side_file_path(st.path, run_id),
            run_id=run_id,
            store=st.display,
            reason=str(error),
            audit=result.to_dict(),
            top_records=_stored_keys(tops, hash_keys, secret),
        )
        with contextlib.suppress(BaseException):  # say where the results went, if the store lets us now
            fail_run(st, run_id, f"not recorded ({error}); results saved in {path}", seconds=seconds)
    finally:
        st.lock_wait = DUCKDB_LOCK_WAIT
    raise NotRecorded(
        f"run {run_id} could not be recorded in store {st.display} ({_why(error)}); its results are saved in {path}",
        result,
    ) from error


def _why(error: DatabaseError) -> str:
    """The reason a store refused, short: a DuckDB file lock names the process holding it."""
    text = str(error)
    if "lock" in text.lower():
        pid = re.search(r"\(PID (\d+)\)", text)
        return "the store file is locked by another process" + (f" (PID {pid.group(1)})" if pid else "")
    return text


# --------------------------------------------------------------------------------------------
# Reading runs (history and tests)


@dataclass(frozen=True)
class StoredRun:
    """One row of ``qar_runs``."""

    run_id: str
    started_at: datetime
    finished_at: datetime | None
    scan_name: str | None
    source: str
    table: str | None
    columns: tuple[str, ...]
    parameters: dict
    engine: str | None
    engine_version: str | None
    qar_version: str
    status: str
    error: str | None
    seconds: float | None
    rows: int | None
    n_qi: int | None
    risk: float | None
    pid: int | None = None  # the process that ran it, its host, its last heartbeat (0003)
    host: str | None = None
    heartbeat_at: datetime | None = None


def _read(store: str | Store | None, table: str, sql: str | Callable[[_Tx], str], params: dict) -> list[tuple]:
    """The rows of a read-only query of ``table`` (``sql``, or made from the transaction); none
    where the store or that table does not exist yet."""
    with using(store) as st:
        if not st.exists():
            return []
        with st.transaction(read_only=True) as tx:
            _check_ours(tx, st.display)
            return tx.execute(sql(tx) if callable(sql) else sql, params) if tx.has_table(table) else []


def _runs_sql(where: str) -> Callable[[_Tx], str]:
    def sql(tx: _Tx) -> str:
        # A store not yet migrated to 0003 (qar migrate) has no liveness columns: read NULLs.
        live = "pid, host, heartbeat_at" if "0003" in _applied(tx) else "null, null, null"
        return (
            "select run_id, started_at, finished_at, scan_name, source, table_name, columns, "
            "parameters, engine, engine_version, qar_version, status, error, duration_seconds, "
            f"row_count, n_qi, risk, {live} from qar_runs {where} order by started_at, run_id"
        )

    return sql


#: What a JSON column of a run's row holds when qar wrote it (:func:`stored_json`).
def _names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


#: The parameters a run records (:func:`record_audit`) as it writes them; the first three always
#: (``pwm`` and ``k`` are later: an older run lacks them).
_PARAMETERS: dict[str, Any] = {"p": int, "alpha": (int, float), "pi_u": (int, float), "pwm": str, "k": int}


def _settings(v: Any) -> bool:
    if not isinstance(v, dict) or not {"p", "alpha", "pi_u"} <= v.keys():
        return False
    scalar = (str, int, float, bool, type(None))
    return all(
        isinstance(x, _PARAMETERS.get(k, scalar)) and not (k in _PARAMETERS and isinstance(x, bool))
        for k, x in v.items()
    )


def _mapping(v: Any) -> bool:
    return isinstance(v, dict)


#: The exceptions of decoding a row qar did not write: JSON's, a value of another type, an
#: object nested thousands deep, a field missing.
_UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def _not_written_by_qar(what: str, run_id: Any, found: str) -> DataError:
    return DataError(
        f"run {str(run_id)!r} in the results store holds {what} that qar did not write ({found}); the store "
        "was changed outside qar: restore it from a copy, or record into a new --store"
    )


def _json_kind(text: Any) -> str:
    """What a stored text holds, in JSON's words (not the text: it may be 100,000 characters)."""
    try:
        value = json.loads(text)
    except _UNREADABLE:
        return "text that is not JSON"
    kinds = {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}
    return kinds.get(type(value), "a number")


def stored_json(text: Any, what: str, run_id: Any, fits: Callable[[Any], bool] = _mapping) -> Any:
    """A JSON column of a run's row (``what``: its name) decoded. The store is a file or database
    the user owns: a value qar never wrote there (edited by hand, by another tool, damaged) is one
    sentence naming the run and the column (exit 2), not JSON's exception ("unexpected", exit 3)
    or a value of another type failing later."""
    try:
        value = json.loads(text)
        ok = fits(value)
    except _UNREADABLE:
        ok = False
    if not ok:
        raise _not_written_by_qar(what, run_id, _json_kind(text))
    return value


@contextlib.contextmanager
def _written_by_qar(what: str, run_id: Any) -> Iterator[None]:
    """Decoding stored values inside the block: a value of a type qar never wrote there is
    :func:`stored_json`'s sentence."""
    try:
        yield
    except _UNREADABLE:
        raise _not_written_by_qar(what, run_id, "values of other types") from None


def runs(store: str | Store | None = None, *, table: str | None = None) -> list[StoredRun]:
    """Every run, oldest first (read-only)."""
    where, params = ("where table_name = :table", {"table": table}) if table is not None else ("", {})
    # The query selects the columns in StoredRun's field order; JSON and counts are decoded here.
    names = [f.name for f in fields(StoredRun)]
    out = []
    for r in _read(store, "qar_runs", _runs_sql(where), params):
        rec: dict[str, Any] = dict(zip(names, r, strict=True))
        rec["columns"] = tuple(stored_json(rec["columns"], "columns", rec["run_id"], _names)) if rec["columns"] else ()
        rec["parameters"] = stored_json(rec["parameters"], "parameters", rec["run_id"], _settings)
        for count in ("rows", "n_qi", "pid"):
            rec[count] = None if rec[count] is None else int(rec[count])
        out.append(StoredRun(**rec))
    return out


def stored_top_records(store: str | Store | None, run_id: str) -> list[tuple[int, str, bool, float]]:
    """The top records a run recorded (``qar records --store``): (rank, key, hashed, contribution),
    rank first; empty when it recorded none."""
    rows = _read(
        store,
        "qar_top_records",
        "select rank, record_key, key_hashed, contribution from qar_top_records where run_id = :id order by rank",
        {"id": run_id},
    )
    return [(int(r), str(k), bool(h), float(c)) for r, k, h, c in rows]


def stored_results(store: str | Store | None, run_id: str) -> dict[str, Any]:
    """Every number a complete run recorded (``qar_run_results``, migration 0004), as JSON data:
    ``audit`` and the other report inputs it kept (``records``); empty for a run recorded before
    0004, or by a store not migrated to it."""
    rows = _read(store, "qar_run_results", _RESULTS_SQL, {"id": run_id})
    return stored_json(rows[0][0], "results", run_id) if rows else {}


_RESULTS_SQL = "select results from qar_run_results where run_id = :id"


def stored_audit(store: str | Store | None, run_id: str) -> AuditResult:
    """The :class:`AuditResult` a complete run recorded (read-only): as the run computed it from
    ``qar_run_results`` (:func:`stored_results`); for a run recorded before migration 0004,
    rebuilt from ``qar_runs``, ``qar_qi_results`` and ``qar_fits``, which keep no class-size
    histograms (each QI's ``class_sizes`` is empty), no fit warnings and no uniqueness."""
    with using(store) as st:
        st.require()
        with st.transaction(read_only=True) as tx:
            if not tx.has_table("qar_runs"):
                raise UsageError(f"the results store {st.display} has no runs; record one with qar audit --store")
            found = tx.execute(
                "select source, table_name, columns, parameters, engine, engine_version, status, "
                "duration_seconds, row_count, warnings from qar_runs where run_id = :id",
                {"id": run_id},
            )
            if not found:
                raise UsageError(
                    f"run {run_id!r} is not in the results store {st.display}; qar history --format json lists "
                    "the run ids"
                )
            source, table, columns, prm, engine, engine_version, status, seconds, rows, warnings = found[0]
            if status != "complete":
                raise UsageError(f"run {run_id!r} is {status}, not complete: it has no results to report")
            kept = tx.execute(_RESULTS_SQL, {"id": run_id}) if tx.has_table("qar_run_results") else []
            results = stored_json(kept[0][0], "results", run_id) if kept else {}
            if results.get("audit") is not None:
                return stored_section(results, "audit", AuditResult, run_id)
            qi_rows = tx.execute(
                "select qi_index, columns, distinct_count, singletons, min_class_size from qar_qi_results "
                "where run_id = :id order by qi_index",
                {"id": run_id},
            )
            fit_rows = tx.execute(
                "select risk, u, n_exceedances, xi, beta, n_qi, n_clipped from qar_fits where run_id = :id",
                {"id": run_id},
            )
    # a run recorded before migration 0004: rebuilt from its rows
    with _written_by_qar("a row", run_id):
        parameters = json.loads(prm)
        rows = int(rows)
        qis = tuple(
            QIStats(int(i), tuple(json.loads(cols)), int(h), int(s), int(m), (), rows) for i, cols, h, s, m in qi_rows
        )
        fit = None
        if fit_rows:
            risk, u, n_exc, xi, beta, n_qi, n_clipped = fit_rows[0]
            fit = TailFit(float(risk), float(u), int(n_exc), float(xi), float(beta), int(n_qi), int(n_clipped), ())
        return AuditResult(
            source=source,
            table=table,
            engine=engine or "",
            engine_version=engine_version or "",
            rows=rows,
            columns=tuple(json.loads(columns)) if columns else (),
            p=int(parameters["p"]),
            alpha=float(parameters["alpha"]),
            pi_u=float(parameters["pi_u"]),
            pwm=parameters.get("pwm", "plotting"),
            qis=qis,
            fit=fit,
            warnings=tuple(json.loads(warnings)) if warnings else (),
            seconds=float(seconds or 0.0),
            k=int(parameters.get("k", 5)),
        )


def stored_section(kept: Mapping[str, Any], name: str, kind: Any, run_id: Any) -> Any:
    """The report input ``name`` of a run's stored results (:func:`stored_results`) as ``kind``."""
    with _written_by_qar(f"results of its {name}", run_id):
        return from_plain(kind, kept[name])
