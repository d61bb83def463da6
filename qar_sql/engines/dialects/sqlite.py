"""SQLite files (``sqlite:///file.db``): Python's own sqlite3 driver through SQLAlchemy.

The file is opened read-only (source.py rewrites the URL to ``?mode=ro``), so an audit can
never write it, and a missing file is an error instead of a new empty database."""

from qar_sql.engines.dialects.base import Dialect

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
