"""SQL dialects: how each engine quotes names and which capabilities it has.

A dialect is a name (SQLAlchemy's backend name, also the template folder that overrides the
portable SQL) plus capability flags. Templates in ``templates/default`` are portable; a flag is
added here only where a test showed an engine needs something different, with a comment why.
"""

from __future__ import annotations

from dataclasses import dataclass

from qar_sql.errors import UsageError


@dataclass(frozen=True)
class Dialect:
    name: str
    #: Opening and closing quote of a delimited identifier, and how a quote inside is escaped.
    quote_open: str = '"'
    quote_close: str = '"'
    quote_escape: str = '""'
    #: Inside a quoted identifier a backslash is an escape character (BigQuery), so a
    #: backslash in a name is doubled; otherwise a name ending in one would swallow the quote.
    backslash_escapes: bool = False
    #: ``WITH x AS MATERIALIZED (...)`` keeps the encoding CTE from being inlined into every
    #: branch of a batch (PostgreSQL >= 12 and DuckDB understand it; warehouses do not).
    cte_materialized: bool = False
    #: The engine can hold session temp tables even on a read-only connection (DuckDB keeps
    #: them in memory). Then the encoded codes are materialised once per audit, not per batch.
    temp_tables: bool = False
    #: Session settings run on every connection after ``read_only_sql`` (user-level settings
    #: that a SELECT-only role may change).
    session_sql: tuple[str, ...] = ()
    #: Statement that makes the current transaction read-only, where the engine has one.
    read_only_sql: str | None = None
    #: Export the main connection's snapshot, and import it ({snapshot}: a string literal) on
    #: every other connection, so parallel statements all read the table as of one moment.
    snapshot_export_sql: str | None = None
    snapshot_import_sql: str | None = None
    #: An exact decimal type for score weights: sums of exact decimals do not depend on the
    #: order of summation, so records with equal flags get equal scores on every engine.
    exact_decimal: str = "decimal(38, 20)"
    #: Cost of creating one group against reading one row in a GROUP BY, for planning cubes
    #: (lattice.py); None: count every QI from the codes (cubes measured not to pay here).
    cube_beta: float | None = None
    #: The dialect runs here (tests execute it) or only compiles (tests render and parse it).
    executable: bool = False

    def quote(self, name: str) -> str:
        """Quote an identifier so any string (quotes, spaces, ``;``, unicode) is one name."""
        if not isinstance(name, str) or name == "":
            raise UsageError(f"invalid SQL identifier {name!r}; names must be non-empty text")
        if "\x00" in name:
            raise UsageError(f"invalid SQL identifier {name!r}: it contains a NUL character")
        if "\n" in name or "\r" in name:
            # Rendering re-indents lines and drops blank ones (render.py), which would silently
            # turn such a name into another one.
            raise UsageError(
                f"column or table name {name!r} contains a line break, which qar cannot quote "
                "safely; rename it or leave it out with --exclude"
            )
        body = name.replace("\\", "\\\\") if self.backslash_escapes else name
        body = body.replace(self.quote_close, self.quote_escape)
        return f"{self.quote_open}{body}{self.quote_close}"

    def quote_path(self, parts: tuple[str, ...]) -> str:
        """Quote a dotted object path (schema, table) part by part."""
        return ".".join(self.quote(p) for p in parts)

    def literal(self, value: str) -> str:
        """A string literal (file paths for DuckDB's readers); single quotes doubled."""
        if "\x00" in value:
            raise UsageError(f"invalid string {value!r}: it contains a NUL character")
        if "\n" in value or "\r" in value:
            raise UsageError(f"invalid string {value!r}: it contains a line break; rename the file")
        return "'" + value.replace("'", "''") + "'"


DIALECTS: dict[str, Dialect] = {
    "duckdb": Dialect("duckdb", cte_materialized=True, temp_tables=True, executable=True),
    "postgresql": Dialect(
        "postgresql",
        cte_materialized=True,
        # Repeatable read: every statement of the transaction reads one snapshot, which the
        # other connections import (pg_export_snapshot), so a table written to during the scan
        # is read as of the scan's start by all of them. A read-only transaction at this level
        # never fails with a serialization error.
        read_only_sql="set transaction isolation level repeatable read, read only",
        snapshot_export_sql="select pg_export_snapshot()",
        snapshot_import_sql="set transaction snapshot {snapshot}",
        # JIT-compiling a statement of hundreds of GROUP BYs costs more than running it: with
        # 256 QIs per statement, 42 s with JIT against 12 s without (bench_audit_postgres.py).
        # Hash aggregates over more than work_mem spill to disk (PostgreSQL's default is 4MB);
        # raise it to 64MB for the session, never lower what the server already grants.
        session_sql=(
            "set jit = off",
            "select set_config('work_mem', '64MB', false) "
            "where pg_size_bytes(current_setting('work_mem')) < 64 * 1024 * 1024",
        ),
        cube_beta=3.0,
        executable=True,
    ),
    # Snowflake: double-quoted identifiers are case-sensitive, which is what we want for exact
    # names. Compile-only here.
    "snowflake": Dialect("snowflake"),
    # BigQuery quotes with backticks and escapes a backtick inside with a backslash; its NUMERIC
    # keeps only 9 decimal places, BIGNUMERIC 38.
    "bigquery": Dialect(
        "bigquery",
        quote_open="`",
        quote_close="`",
        quote_escape="\\`",
        backslash_escapes=True,
        exact_decimal="bignumeric",
    ),
}

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
