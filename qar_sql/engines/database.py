"""What every engine adapter shares: the relation to read, the :class:`Database` interface,
statement timing and table lookup. Its own module so that an engine in a module of its own
(``spark.py``, ``clickhouse.py``) builds on it without importing ``source.py``, which opens them.
"""

from __future__ import annotations

import difflib
import logging
import re
import shlex
import time
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, closing, contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import numpy as np

from qar_sql.engines.dialects import Dialect
from qar_sql.engines.render import render
from qar_sql.engines.secrets import scrub
from qar_sql.errors import DatabaseError, QarError, SourceNotFound, UsageError
from qar_sql.user_text import one_line

#: Every statement and its time at DEBUG (``qar -vv`` or ``--log-level debug``); the library
#: logs, never prints.
log = logging.getLogger("qar_sql.engines.source")


class Timed:
    """Logs one statement with its time and row count at DEBUG, also when it fails."""

    def __init__(self, engine: str, sql: str):
        self.engine, self.sql, self.rows = engine, sql, None

    def __enter__(self):
        self.started = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb):
        if log.isEnabledFor(logging.DEBUG):
            seconds = time.perf_counter() - self.started
            outcome = "failed" if exc_type else f"{self.rows} rows" if self.rows is not None else "done"
            log.debug("%s %.3f s (%s): %s", self.engine, seconds, outcome, self.sql.strip())


@dataclass(frozen=True)
class Relation:
    """What the scan reads: SQL text for the FROM clause (already quoted) and its columns."""

    sql: str
    display: str
    columns: tuple[str, ...]
    kind: str  # "csv", "parquet", "table", "frame"
    #: SQL for the file order of rows (files only): the default record identity.
    row_order: str | None = None
    #: CSV files: (column, type) of the columns DuckDB's reader inferred as something other
    #: than text (numbers, dates, ...), where "1.0" and "1" become one value; empty with
    #: ``all_text``.
    inferred: tuple[tuple[str, str], ...] = ()
    #: CSV files: text columns whose values are numbers but for a few tokens, as (column,
    #: ((token, rows), ...)) — a missing-value code such as ``NA`` that made the column text.
    numeric_except: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()

    def token_notes(self, columns) -> list[str]:
        """One sentence per given column that is numeric but for a few tokens, naming them and
        the option that reads them as NULL."""
        wanted = set(columns)
        out = []
        for column, tokens in self.numeric_except:
            if column not in wanted:
                continue
            found = " and ".join(f"{t!r} in {n:,} row{'s' if n != 1 else ''}" for t, n in tokens)
            options = " ".join(f"--null-token {shlex.quote(t)}" for t, _ in tokens)
            out.append(
                f"{column} is numeric except {found}, so the column is read as text; read those as NULL with {options}"
            )
        return out

    def inferred_notes(self, columns) -> list[str]:
        """One sentence naming the given columns that were read as numbers, dates or times."""
        typed = [f"{c!r} ({t})" for c, t in self.inferred if c in set(columns)]
        if not typed:
            return []
        if len(typed) > NAMED_TYPED:  # (a wide table's note named all of its 5,000 columns)
            typed = [*typed[:NAMED_TYPED], f"and {len(typed) - NAMED_TYPED:,} more"]
        return [
            f"CSV columns read as numbers, dates or times: {', '.join(typed)}; values that read alike "
            "(such as 1.0 and 1) are then one value. Use --all-text to read every column as text"
        ]


#: The typed columns a CSV's note names; more are counted.
NAMED_TYPED = 20


class Database:
    """A connection to one engine. ``query`` runs one statement; ``query_many`` runs
    independent read statements, concurrently where the engine benefits."""

    dialect: Dialect
    engine_name: str
    engine_version: str
    #: True while a :class:`Source` (``qar_sql.connect``) owns the connection: the API functions
    #: it is passed to leave it open for the next one.
    shared: bool = False
    #: Relation SQL -> {column: declared type name}, for engines whose SQL cannot name a
    #: column's type (``Dialect.typeof`` False): read from the catalog when the table is opened.
    declared_types: dict[str, dict[str, str]] = {}

    def query(self, sql: str, params: dict | None = None) -> list[tuple]:  # pragma: no cover
        raise NotImplementedError

    def column_types(self, relation_sql: str, columns: Sequence[str]) -> list[str]:
        """The type name of each of ``columns`` of a relation (one tiny query, or none): the
        catalog's where the table was opened with it, the driver's where SQL cannot name a type
        (MariaDB, ``Dialect.typeof`` False), else the dialect's ``column_types.sql``."""
        if not columns:
            return []
        declared = self.declared_types.get(relation_sql)
        if declared is not None and all(c in declared for c in columns):
            return [declared[c] for c in columns]
        if not self.dialect.typeof and hasattr(self, "result_types"):
            items = ", ".join(f"t.{self.dialect.quote(c)}" for c in columns)
            return list(self.result_types(f"select {items} from {relation_sql} as t limit 0"))

        row = self.query(render("column_types.sql", self.dialect, columns=list(columns), relation=relation_sql))[0]
        return [str(t) for t in row]

    def stream(self, sql: str, chunk: int) -> Generator[list[tuple], None, None]:
        """Rows in chunks of at most ``chunk``. This default fetches the result whole and cuts it
        (chdb hands results over whole); engines with a server-side cursor override it, so that
        only one chunk is in memory at a time."""
        rows = self.query(sql)
        for i in range(0, len(rows), chunk):
            yield rows[i : i + chunk]

    def arrays(self, sql: str, columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
        """The result of ``sql`` as one numpy array per output column: ``columns`` names them, in
        the SELECT's order, with their dtypes. NULL becomes NaN in a float column; an integer
        column has none. The same arrays on every engine: this default reads the rows in chunks
        (:meth:`stream`), never more than one chunk of Python tuples at once; an engine that
        hands columns over whole (DuckDB's ``fetchnumpy``) overrides it."""
        names = list(columns)
        dtypes = [np.dtype(columns[n]) for n in names]
        parts: list[list[np.ndarray]] = [[] for _ in names]
        # closing: a failure mid-result closes the cursor, so the connection can run the next
        # statement (an unread streaming result blocks MariaDB's).
        with closing(self.stream(sql, ARRAY_CHUNK_ROWS)) as chunks:
            for rows in chunks:
                if rows and len(rows[0]) != len(names):
                    raise DatabaseError(
                        f"{self.engine_name} returned {len(rows[0])} columns where {len(names)} were expected"
                    )
                for part, values, name, dtype in zip(parts, zip(*rows), names, dtypes):
                    part.append(_column_array(values, name, dtype))
        return {n: np.concatenate(p) if p else np.zeros(0, dtype=d) for n, p, d in zip(names, parts, dtypes)}

    def arrow_batches(self, sql: str, names: Sequence[str], batch_rows: int) -> Iterator[Any]:
        """The result of ``sql`` (whose output columns are ``names``) as pyarrow record batches
        of at most ``batch_rows`` rows, one in memory at a time. This default makes one batch of
        each chunk of :meth:`stream`; DuckDB overrides it with its native Arrow reader."""
        import pyarrow as pa

        with closing(self.stream(sql, batch_rows)) as chunks:
            for rows in chunks:
                values = list(zip(*rows))
                yield pa.RecordBatch.from_arrays([pa.array(list(c)) for c in values], names=list(names))

    def array_relation(self, arrays: Mapping[str, np.ndarray]) -> AbstractContextManager[tuple[str, dict | None]]:
        """A relation whose columns are the given integer arrays (equal lengths), for a FROM
        clause: a context manager giving (SQL, the parameters to bind with it) and releasing
        the relation on exit. Only where ``dialect.array_relation`` says the engine reads arrays
        from Python without writing a table (an audit writes nothing)."""
        raise NotImplementedError(f"{self.dialect.name} reads no arrays as a relation")

    def stored_row_order(self, relation_sql: str) -> str | None:
        """A column of ``relation_sql`` numbering its rows in the order they are stored (DuckDB
        tables' ``rowid``), or None (this default) where the engine keeps no such order."""
        return None

    def recover(self) -> None:
        """Make the connection usable again after a failed statement (engines that abort the
        transaction on an error override this)."""

    def drop_temp_tables(self, names) -> None:
        """Drop session temp tables by (unquoted) name, if they exist; cleanup never raises,
        so it cannot hide the error that interrupted the work."""
        for name in names:
            with suppress(QarError):
                self.query(f"drop table if exists {self.dialect.quote(name)}")

    def query_many(
        self, statements: Sequence[str], *, jobs: int = 1, on_done: Callable[[], None] | None = None
    ) -> list[list[tuple]]:
        results = []
        for sql in statements:
            results.append(self.query(sql))
            if on_done:
                on_done()
        return results

    def close(self) -> None:  # pragma: no cover - interface
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self.shared:
            self.close()


#: Rows per chunk when :meth:`Database.arrays` builds arrays from rows: the Python tuples of one
#: chunk are in memory at a time.
ARRAY_CHUNK_ROWS = 100_000


def _column_array(values: Sequence[Any], name: str, dtype: np.dtype) -> np.ndarray:
    """One chunk of a column's values as an array of ``dtype`` (NULL → NaN in a float column)."""
    try:
        return np.asarray(values, dtype=dtype)  # None becomes NaN in a float array
    except (TypeError, ValueError) as exc:
        raise DatabaseError(f"column {name!r} of a result did not read as {dtype} values: {exc}") from exc


@contextmanager
def closed_on_error(db: Database) -> Iterator[None]:
    """Close ``db`` if the block fails (an opener describing its relation), so that an opener
    never leaves a connection behind its error."""
    try:
        yield
    except Exception:
        db.close()
        raise


def first_line(exc: BaseException) -> str:
    # Only real line ends: str.splitlines() also splits at U+2028, U+0085 or a form feed inside
    # a quoted name, which cut messages short.
    text = str(exc).strip()
    return re.split(r"\r\n|\r|\n", text)[0] if text else type(exc).__name__


def check_url(url: str, what: str) -> None:
    """The one reading of a database URL the user gives (a source, a store) before SQLAlchemy or
    a driver reads it: a port that is not a number (SQLAlchemy's ``int()``, also of a password's
    unencoded ``@`` ... ``:``) or outside 1–65535, or a host no resolver can take (the ``idna``
    codec's UnicodeError, raised by the driver's lookup), is one sentence about ``what``
    ("database URL …", "store URL …", masked), exit 2. A URL SQLAlchemy cannot parse at all is
    left to ``create_engine``, whose callers name it."""
    import sqlalchemy as sa

    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return
    except ValueError as exc:
        if not str(exc).startswith("invalid literal for int()"):
            raise
        netloc = url.split("://", 1)[-1].split("/", 1)[0].rpartition("@")[2]
        if "[" in netloc and "]" not in netloc:  # (postgresql://[::1/db: SQLAlchemy read "1/db" as the port)
            raise UsageError(
                f"cannot use {what}: its host opens an IPv6 address with [ and does not close it; write [::1]:5432"
            ) from None
        raise UsageError(
            f"cannot use {what}: its port is not a number; give the port as digits after the host (host:5432), "
            "and write an @, : or / in the password as %40, %3A or %2F"
        ) from None
    if parsed.drivername.split("+")[0].lower() == "duckdb" and "?" in url:
        # (qar opens a DuckDB file itself, by its path: a query there was read as part of the
        # file's name: "'x.duckdb?access_mode=READ_WRITE' does not exist", or a new store made
        # under that name beside the one named)
        raise UsageError(
            f"cannot use {what}: qar reads no options in a DuckDB URL ({url[url.index('?') :]!r}); "
            f"name the file alone, as duckdb:///{parsed.database or 'path/to/file.duckdb'}"
        )
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UsageError(
            f"cannot use {what}: its port {parsed.port} is not between 1 and 65535; give the server's port"
        )
    if parsed.host:
        try:
            parsed.host.encode("idna")
        except UnicodeError:
            raise UsageError(
                f"cannot use {what}: its host {parsed.host!r} is not a host name (an empty or over-long part, or "
                "a character no host name holds); give the server's name or address"
            ) from None


#: libpq's refusals of a URL's query option, which it makes while reading the options, before it
#: opens a socket (connectOptions2, PQconninfoParse): bad input, not a failed connection.
_LIBPQ_OPTION = (
    re.compile(r'invalid (?P<name>[\w ]+?) value: "(?P<value>.*)"'),
    re.compile(r'invalid connection option "(?P<name>.*)"'),
    re.compile(r"bad value for (?P<name>\w+): '(?P<value>.*)'"),  # (psycopg's own: connect_timeout=abc)
)


def connect_failure(exc: BaseException, where: str, secrets: Sequence[str] = ()) -> QarError:
    """The error for ``exc``, a driver's refusal to connect to ``where`` (a masked URL, "store
    …"): a URL option the driver refused before connecting (``?sslmode=bogus``, ``?bogus=1``) is
    bad input (exit 2) naming the option and its value; anything else a DatabaseError (exit 3)."""
    reason = scrub(first_line(getattr(exc, "orig", None) or exc), secrets)
    for pattern in _LIBPQ_OPTION:
        if m := pattern.search(reason):
            name = m.group("name").replace(" ", "_")
            value = m.groupdict().get("value")
            shown_option = one_line(f"{name}={value}" if value is not None else name)
            return UsageError(
                f"cannot connect to {where}: the driver refuses the URL's option {shown_option} ({reason}); "
                "fix or remove it in the URL's ?query"
            )
    return DatabaseError(f"cannot connect to {where}: {reason}")


def check_store_engine(url: str, what: str, example: str) -> None:
    """A results store URL names PostgreSQL, the one server engine its migrations cover
    (migrations/README.md; a DuckDB file is no URL); ``what`` names the URL, masked, and
    ``example`` is how to name a store instead."""
    import sqlalchemy as sa

    try:
        backend = sa.engine.make_url(url).get_backend_name()
    except (sa.exc.ArgumentError, ValueError):  # (ValueError: a port that is no number)
        return  # opening the store names what is wrong with the URL
    if backend != "postgresql":
        raise UsageError(
            f"{what} is a {backend} database; a results store is a DuckDB file or a PostgreSQL database, e.g. {example}"
        )


def pick_table(dialect, where, table, tables, default_schema) -> tuple[Relation, tuple[str, str]]:
    """Find ``table`` among (schema, name) pairs: exact name first, then ``schema.table``."""
    where = one_line(where)  # (a file's name, in a one-sentence message)
    if not table:
        names = sorted({t for _, t in tables})
        listing = one_line(", ".join(names[:10]) + (" ..." if len(names) > 10 else ""))
        raise UsageError(
            f"{where} holds tables; name one with --table" + (f" (tables: {listing})" if names else " (it has none)")
        )
    candidates = [(s, t) for s, t in tables if t == table and s == default_schema]
    if not candidates and "." in table:
        # At any dot: a schema may hold one too (dbt writes a custom schema `s.x` as `main_s.x`).
        candidates = [(s, t) for s, t in tables if f"{s}.{t}" == table]
    if not candidates:
        candidates = [(s, t) for s, t in tables if t == table]
    if not candidates:
        known = [t for _, t in tables] + [f"{s}.{t}" for s, t in tables]
        close = difflib.get_close_matches(table, known, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else "; check the name with your database client"
        raise SourceNotFound(f"table {table!r} not found in {where}{hint}")
    if len(candidates) > 1:
        raise UsageError(
            f"table {table!r} exists in several schemas ({', '.join(s for s, _ in candidates)}); "
            "write it as schema.table"
        )
    schema, name = candidates[0]
    display = name if schema == default_schema else f"{schema}.{name}"
    return Relation(dialect.quote_path((schema, name)), display, (), "table"), (schema, name)
