"""The :class:`Dialect` every engine module fills in: how an engine quotes names and literals,
and what it can do, as flags (the way sqlglot's dialect classes declare an engine's features).
A flag's default is the portable behaviour; an engine module overrides it only where a test
showed that engine needs something different, with a comment why."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypedDict

from qar_sql.errors import UsageError
from qar_sql.user_text import unsafe_character


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
    #: Columns per profile statement (each counts its columns' distinct values); None: the
    #: scan's default (scan.PROFILE_COLUMNS). Spark copies every row once per COUNT(DISTINCT)
    #: of a statement.
    profile_columns: int | None = None
    #: ``UNPIVOT`` turns columns of one type into rows (DuckDB): a wide table is profiled by a
    #: statement per type and :data:`qar_sql.pushdown.scan.UNPIVOT_COLUMNS` columns, grouping
    #: the (column, value) rows, instead of a COUNT(DISTINCT) per column.
    unpivot: bool = False
    #: The dialect runs here (tests execute it) or only compiles (tests render and parse it).
    executable: bool = False
    #: The name sqlglot gives this dialect (tests parse every rendered statement with it).
    sqlglot: str = ""
    # The four flags below describe how the engine computes; no code branches on them (templates
    # are written to be right either way), and tests/engines/test_dialect_flags.py checks each against
    # the engine itself, so they are facts a template author can rely on.
    #: ``GROUP BY GROUPING SETS`` / ``CUBE`` exist (MariaDB and SQLite have neither, so their
    #: ``cube_beta`` is None: no cube is planned, lattice.py).
    grouping_sets: bool = True
    #: ``/`` between two integers truncates (PostgreSQL, SQLite), instead of giving a fraction
    #: (DuckDB, MariaDB's decimal). Templates cast one side to a float wherever a fraction is meant.
    integer_division: bool = False
    #: NULL sorts first in ascending order (SQLite, MariaDB, Spark) instead of last (PostgreSQL,
    #: DuckDB, ClickHouse). Orders that feed results name ``nulls first/last`` or sort on ``x is null``.
    nulls_first: bool = False
    #: A text column compared as this expression ({}: the column) compares code points with no
    #: padding, as DuckDB does; None where plain comparison already does (MariaDB's default
    #: collations ignore case and trailing spaces, so 'a' = 'A' = 'a ').
    binary_text: str | None = None
    #: The type names CAST takes for a double and for text (BigQuery: float64 and string;
    #: MariaDB casts to double and char only).
    double: str = "double precision"
    text: str = "varchar"
    #: ... and for a 64-bit integer (MariaDB: signed).
    bigint: str = "bigint"
    #: NULL-safe equality ({a}, {b}): MariaDB has no IS NOT DISTINCT FROM, only <=>.
    null_safe_equal: str = "{a} is not distinct from {b}"
    #: An aggregate of x·y summed exactly over integer expressions ({x}, {y}), where a sum of
    #: DECIMAL(38, 0) products is not exact (SQLite turns an overflowing product into a float).
    exact_product_sum: str | None = None
    #: Written after a subquery's FROM so the engine computes it as a subquery instead of
    #: inlining its expressions into the outer query, which evaluates a column once per
    #: reference (the PRNG's Feistel rounds reference each lane three times: 3^rounds work).
    fence: str = ""
    #: Appended to a text expression so it orders by bytes (code points), as DuckDB does.
    byte_order: str = ""
    #: SQL can name a column's declared type from a value (typeof, pg_typeof). False (SQLite's
    #: typeof names a value's storage class, MariaDB has none): types come from the catalog
    #: (SQLAlchemy's inspector) when the table is opened.
    typeof: bool = True
    #: Arithmetic on 64-bit integers wraps modulo 2^64 (ClickHouse); False: an overflow is an
    #: error, or a float on SQLite. Either way the PRNG keeps every intermediate below 2^63
    #: (treat/prng.py), so no engine's overflow is ever reached.
    integer_wraps: bool = False
    #: The aggregate corr(x, y) exists (MariaDB has none: Pearson's r is then computed from sums
    #: in templates/default/infoloss_columns.sql).
    corr: bool = True
    #: A WITH inside a derived table sees the CTEs of the statement around it (MariaDB's does
    #: not: "Table 'x' doesn't exist"), so a relation can be put in front as a CTE.
    outer_cte_scope: bool = True
    #: A SELECT can carry settings in a trailing SETTINGS clause (ClickHouse): a view emitted
    #: by ``--emit-sql`` then carries ``session_sql``'s settings and reads right in any session.
    settings_clause: bool = False
    #: Arrays from Python are read as a relation with no table written
    #: (:meth:`Database.array_relation`): DuckDB registers them, psycopg binds a list as a
    #: PostgreSQL array that ``unnest`` reads. Block elimination needs it.
    array_relation: bool = False
    #: A text's hash as text, to order rows for nested subsamples (templates/default/row_sample.sql);
    #: None where the engine has none (SQLite): ``--row-subsamples`` is refused there.
    row_hash: str | None = "md5({x})"
    #: Where every statement rendered in this dialect is kept (a session's
    #: :attr:`~qar_sql.engines.session.Session.sql_log` while it logs, on the copy of the
    #: dialect its connection then renders with); None: kept nowhere. Not part of its identity.
    sql_log: list[str] | None = field(default=None, compare=False, repr=False)

    def quote(self, name: str) -> str:
        """Quote an identifier so any printable string (quotes, spaces, ``;``, unicode) is one name."""
        refuse_unsafe_name(name)
        body = name.replace("\\", "\\\\") if self.backslash_escapes else name
        body = body.replace(self.quote_close, self.quote_escape)
        return f"{self.quote_open}{body}{self.quote_close}"

    def same(self, a: str, b: str) -> str:
        """SQL true when ``a`` and ``b`` are equal or both NULL (never NULL itself)."""
        return self.null_safe_equal.format(a=a, b=b)

    def differs(self, a: str, b: str) -> str:
        """SQL true when ``a`` and ``b`` differ, one NULL and the other not counting."""
        return f"not ({self.same(a, b)})"

    def exact_sum(self, x: str, y: str | None = None) -> str:
        """SQL summing the integers ``x`` (times ``y``) with no rounding at any size."""
        if self.exact_product_sum:
            return self.exact_product_sum.format(x=x, y=y or "1")
        dec = f"cast({x} as decimal(38, 0))"
        return f"sum({dec} * cast({y} as decimal(38, 0)))" if y else f"sum({dec})"

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


#: Names quoted in backticks, a backtick inside doubled (MariaDB/MySQL, Spark): ``Dialect(...,
#: **BACKTICKS)``.
class Quoting(TypedDict):
    quote_open: str
    quote_close: str
    quote_escape: str


BACKTICKS: Quoting = {"quote_open": "`", "quote_close": "`", "quote_escape": "``"}


def _refuse_unprintable(text: str, what: str, fix: str, allow: str = "") -> None:
    """``repr`` shows such characters escaped, so the message itself is never cut."""
    bad = unsafe_character(text, allow)
    if bad is not None:
        kind = "a line break" if bad in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029" else "the character"
        raise UsageError(
            f"{what} {text!r} contains {kind} (U+{ord(bad):04X}), which qar cannot put in SQL safely; {fix}"
        )


def refuse_unsafe_name(name: str) -> None:
    """Refuse a name :meth:`Dialect.quote` cannot quote (on every dialect): empty, or holding a
    line break, a control character or a bidirectional override."""
    if not isinstance(name, str) or name == "":
        raise UsageError(f"invalid SQL identifier {name!r}; names must be non-empty text")
    # A tab stays on its line: a name with one is quoted like any other.
    _refuse_unprintable(
        name, "column or table name", "rename it, or if it is a column leave it out with --exclude", allow="\t"
    )


def refuse_unsafe_columns(columns: Iterable[str], carried_by: str) -> None:
    """Refuse, before any work, a column name :meth:`Dialect.quote` would refuse, where
    ``carried_by`` (a release of the whole table) writes every column into its SQL, so that
    ``--exclude`` cannot leave it out as it does for an audit."""
    for name in columns:
        _refuse_unprintable(
            name,
            "column name",
            f"{carried_by} carries every column of the table, so --exclude does not leave it out; "
            "give it a view that renames or drops that column",
            allow="\t",
        )


def sql_comment(text: str) -> str:
    """``text`` safe inside a ``--`` comment: every unsafe character (a line break or separator
    would end the comment and let the rest run as SQL) written as its escape."""
    return "".join(c.encode("unicode_escape").decode("ascii") if unsafe_character(c) else c for c in text)
