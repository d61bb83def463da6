"""MariaDB and MySQL (``mysql+pymysql://``, ``mariadb+pymysql://``): through SQLAlchemy and
PyMySQL (``pip install 'qar-sql[mysql]'``). Runs in the test suite against Debian's
mariadb-server; SQL it needs differently lives in templates/mysql/."""

from typing import Any

from qar_sql.engines.dialects.base import BACKTICKS, Dialect
from qar_sql.engines.dialects.unit import Engine, ServerRecipe

DIALECT = Dialect(
    "mysql",
    **BACKTICKS,
    # One consistent InnoDB snapshot (the default isolation is repeatable read) for the whole
    # read-only transaction: a write to the table mid-scan is not seen.
    read_only_sql="start transaction read only, with consistent snapshot",
    # GROUP BY builds an internal temporary table, written to disk once it outgrows 16 MB (the
    # default): a QI of 523,068 classes over 1,000,000 rows took 22.8 s, 5.4 s with 256 MB in
    # memory. Session variables, so a SELECT-only user may set them; memory is taken as needed.
    session_sql=("set session tmp_table_size = 268435456, max_heap_table_size = 268435456",),
    # A backslash escapes inside a string literal (unless NO_BACKSLASH_ESCAPES is set, where
    # a doubled backslash would read as two: the server's default mode is assumed).
    string_backslash_escapes=True,
    # CAST takes double, char and signed, not double precision, varchar or bigint.
    double="double",
    text="char",
    bigint="signed",
    null_safe_equal="({a} <=> {b})",
    # No corr() aggregate: Pearson's r from sums (templates/default/infoloss_columns.sql).
    corr=False,
    # A nested WITH does not see the outer statement's CTEs: compare's treated release reads its
    # base as a derived table instead (comparison/tables.py).
    outer_cte_scope=False,
    # MariaDB merges derived tables and CTEs into the outer query, but never one with a LIMIT.
    fence="limit 18446744073709551615",
    # No GROUPING SETS (MySQL 8 has ROLLUP only, MariaDB not even grouping()): each QI is
    # counted from the codes.
    grouping_sets=False,
    # NULL is the smallest value in ORDER BY.
    nulls_first=True,
    # The default collations (utf8mb4_general_ci and the like) compare 'a' = 'A' = 'a ': a
    # text value is grouped, joined and sorted by its code points, with no padding, as in
    # DuckDB (convert first: a latin1 column cannot take a utf8mb4 collation).
    binary_text="convert({} using utf8mb4) collate utf8mb4_nopad_bin",
    # No function gives a column's declared type: the catalog does.
    typeof=False,
    executable=True,
    sqlglot="mysql",
)


def describe(db: Any, schema: str, name: str) -> list[tuple[str, str, bool]]:
    """The table's columns from the catalog: SQLAlchemy's MySQL reflection leaves a backtick in a
    column name doubled, the catalog has the names as they are."""
    rows = db.query(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = %(schema)s and table_name = %(name)s order by ordinal_position",
        {"schema": schema, "name": name},
    )
    text = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set")
    return [(str(c), str(t), str(t).lower() in text) for c, t in rows]


#: The protocol's type codes (by pymysql's names) as the type names treatments.type_kind reads.
_TYPES = {
    **dict.fromkeys(("TINY", "SHORT", "LONG", "INT24", "LONGLONG", "YEAR"), "bigint"),
    **dict.fromkeys(("DOUBLE", "FLOAT", "DECIMAL", "NEWDECIMAL"), "double"),
    **dict.fromkeys(("VAR_STRING", "STRING", "VARCHAR", "BLOB", "TINY_BLOB", "MEDIUM_BLOB", "LONG_BLOB"), "text"),
}


def type_names(codes: list[Any]) -> list[str]:
    """The type names of pymysql's type codes (MariaDB's protocol sends a result's types)."""
    try:
        from pymysql.constants import FIELD_TYPE

        names = {v: k for k, v in vars(FIELD_TYPE).items() if k.isupper()}
    except ImportError:
        names = {}
    return [_TYPES.get(names.get(c, ""), str(c)) for c in codes]


ENGINE = Engine(
    DIALECT,
    describe=describe,
    type_names=type_names,
    schemes=("mysql", "mariadb"),
    url_forms=("mysql+pymysql", "mariadb+pymysql"),
    extra="mysql",
    modules=("pymysql",),
    # mariadb: the MariaDB Connector/Python, an alternative driver.
    distributions=("pymysql", "mariadb"),
    # scripts/mariadb.sh: a user with every privilege on the databases qar_test% (and a
    # SELECT-only user, QAR_TEST_MYSQL_RO_URL).
    test_server=ServerRecipe(
        "QAR_TEST_MYSQL_URL", "mysql+pymysql://qar_test:qar_test@127.0.0.1:3306/qar_test", "scripts/mariadb.sh"
    ),
)
