"""SQLite files (``sqlite:///file.db``): Python's own sqlite3 driver through SQLAlchemy.

The file is opened read-only (source.py rewrites the URL to ``?mode=ro``), so an audit can
never write it, and a missing file is an error instead of a new empty database."""

from qar_sql.engines.dialects.base import Dialect
from qar_sql.engines.dialects.unit import Engine

DIALECT = Dialect(
    "sqlite",
    # A second line of defence beside mode=ro: the connection refuses every write.
    read_only_sql="pragma query_only = on",
    # No GROUPING SETS or CUBE: each QI is counted from the codes.
    grouping_sets=False,
    # 7 / 2 = 3 on integers; NULL is the smallest value in ORDER BY.
    integer_division=True,
    nulls_first=True,
    # Integers are 64-bit and an overflowing product silently becomes a float: exact sums go
    # through an aggregate of Python integers (source.py registers it), returned as text.
    exact_product_sum="qar_exact_sum({x}, {y})",
    # SQLite flattens subqueries (and CTEs) into the outer query, but never one with an OFFSET;
    # flattened, the PRNG's rounds grew to gigabytes of expression tree.
    fence="limit -1 offset 0",
    # No function gives a column's declared type: the catalog does.
    typeof=False,
    # No hash function: no nested row subsamples.
    row_hash=None,
    executable=True,
    sqlglot="sqlite",
)


def local_file(url: str) -> str | None:
    """The file of ``sqlite:///path`` as SQLAlchemy reads it (none for memory or a ``file:`` URI)."""
    try:
        from sqlalchemy.engine import make_url

        database = make_url(url).database
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: it names no file here
        return None
    return None if not database or database == ":memory:" or database.startswith("file:") else database


#: Python's own sqlite3: no extra, no server.
ENGINE = Engine(DIALECT, schemes=("sqlite",), local_file=local_file)
