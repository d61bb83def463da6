"""SQL dialects: how each engine quotes names and which capabilities it has.

A dialect is a name (SQLAlchemy's backend name, also the template folder that overrides the
portable SQL) plus capability flags. Templates in ``templates/default`` are portable; a flag is
added here only where a test showed an engine needs something different, with a comment why.
"""

from __future__ import annotations

import unicodedata
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
    #: In a string literal a backslash is an escape character (BigQuery, Snowflake, MySQL,
    #: Spark): a backslash in a value is doubled. And how a single quote inside is written.
    string_backslash_escapes: bool = False
    string_quote_escape: str = "''"
    #: Type names for a cast to a double and to text ("double precision" and "varchar" are
    #: SQL's; Spark and BigQuery know neither name).
    float_type: str = "double precision"
    text_type: str = "varchar"
    #: The dialect runs here (tests execute it) or only compiles (tests render and parse it).
    executable: bool = False

    def quote(self, name: str) -> str:
        """Quote an identifier so any printable string (quotes, spaces, ``;``, unicode) is one name."""
        if not isinstance(name, str) or name == "":
            raise UsageError(f"invalid SQL identifier {name!r}; names must be non-empty text")
        # A tab stays on its line: a name with one is quoted like any other.
        _refuse_unprintable(name, "column or table name", "rename it or leave it out with --exclude", allow="\t")
        body = name.replace("\\", "\\\\") if self.backslash_escapes else name
        body = body.replace(self.quote_close, self.quote_escape)
        return f"{self.quote_open}{body}{self.quote_close}"

    def quote_path(self, parts: tuple[str, ...]) -> str:
        """Quote a dotted object path (schema, table) part by part."""
        return ".".join(self.quote(p) for p in parts)

    def literal(self, value: str) -> str:
        """A string literal under this engine's rules: where a backslash escapes (BigQuery,
        Snowflake, MySQL, Spark) it is doubled, so a value ending in one cannot swallow the
        closing quote; the quote itself is escaped the engine's way."""
        # A tab stays on its line and is a real value (the tab delimiter of a CSV reader).
        _refuse_unprintable(value, "text value", "change the value or the file name", allow="\t")
        body = value.replace("\\", "\\\\") if self.string_backslash_escapes else value
        return "'" + body.replace("'", self.string_quote_escape) + "'"


#: Bidirectional overrides and isolates: they make SQL read differently from what runs.
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def unsafe_character(text: str, allow: str = "") -> str | None:
    """The first character that cannot stay inside one SQL name, value or comment: a control
    character (NUL, tab, form feed, U+0085…), a line or paragraph separator (U+2028, U+2029;
    Python's ``splitlines`` and some SQL tools break lines there) or a bidirectional override."""
    for c in text:
        if (unicodedata.category(c) in ("Cc", "Zl", "Zp") or c in _BIDI) and c not in allow:
            return c
    return None


def _refuse_unprintable(text: str, what: str, fix: str, allow: str = "") -> None:
    """``repr`` shows such characters escaped, so the message itself is never cut."""
    bad = unsafe_character(text, allow)
    if bad is not None:
        kind = "a line break" if bad in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029" else "the character"
        raise UsageError(
            f"{what} {text!r} contains {kind} (U+{ord(bad):04X}), which qar cannot put in SQL safely; {fix}"
        )


def sql_comment(text: str) -> str:
    """``text`` safe inside a ``--`` comment: every unsafe character (a line break or separator
    would end the comment and let the rest run as SQL) written as its escape."""
    return "".join(c.encode("unicode_escape").decode("ascii") if unsafe_character(c) else c for c in text)


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
    # Apache Spark through Spark Connect (engines/spark.py): backticks quote a name (a backtick
    # inside is doubled). In a string literal a backslash escapes, and two adjacent literals
    # 'a''b' are concatenated to 'ab', so a quote inside is written \'.
    "spark": Dialect(
        "spark",
        quote_open="`",
        quote_close="`",
        quote_escape="``",
        string_backslash_escapes=True,
        string_quote_escape="\\'",
        float_type="double",
        text_type="string",
        executable=True,
    ),
    # ClickHouse in process through chdb (engines/clickhouse.py). Inside a quoted name and a
    # string literal a backslash escapes. Names and values are case-sensitive and text
    # compares bytes, as in DuckDB; NULL sorts last; Nullable columns group NULLs together.
    "clickhouse": Dialect(
        "clickhouse",
        backslash_escapes=True,
        string_backslash_escapes=True,
        # An outer join's unmatched side is NULL, not the type's default (0, ''), and a cast
        # of a Nullable value keeps NULL instead of failing: the SQL the templates assume.
        # An aggregate over no rows is NULL (sum() would be 0).
        session_sql=(
            "set join_use_nulls = 1",
            "set cast_keep_nullable = 1",
            "set aggregate_functions_null_for_empty = 1",
        ),
        # Reads and settings only, from here on: no statement can write (readonly = 2 still
        # allows session temporary tables).
        read_only_sql="set readonly = 2",
        executable=True,
    ),
    # Snowflake: double-quoted identifiers are case-sensitive, which is what we want for exact
    # names. Compile-only here.
    "snowflake": Dialect("snowflake", string_backslash_escapes=True),
    # BigQuery quotes with backticks and escapes a backtick inside with a backslash; its NUMERIC
    # keeps only 9 decimal places, BIGNUMERIC 38.
    "bigquery": Dialect(
        "bigquery",
        quote_open="`",
        quote_close="`",
        quote_escape="\\`",
        backslash_escapes=True,
        string_backslash_escapes=True,
        string_quote_escape="\\'",
        exact_decimal="bignumeric",
        float_type="float64",
        text_type="string",
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
