"""SQLite files (``sqlite:///file.db``): Python's own sqlite3 driver through SQLAlchemy.

The file is opened read-only (:func:`read_only_engine` opens it with ``?mode=ro``), so an audit can
never write it, and a missing file is an error instead of a new empty database."""

import math
from pathlib import Path
from typing import Any

from qar_sql.engines.dialects.base import Dialect
from qar_sql.engines.dialects.unit import Engine
from qar_sql.errors import SourceNotFound, UsageError

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
    # through an aggregate of Python integers (read_only_engine registers it), returned as text.
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


def read_only_engine(sa: Any, url: str) -> Any:
    """A SQLAlchemy engine on a SQLite file opened read-only (``mode=ro``): an audit can never
    write it, and a missing file is an error instead of a new, empty database."""
    import sqlite3
    from urllib.parse import quote

    path = sa.engine.make_url(url).database or ""
    if path in ("", ":memory:") or path.startswith("file:"):
        raise UsageError(f"the SQLite URL {url!r} names no file; write it as sqlite:///path/to/file.db")
    if not Path(path).is_file():
        raise SourceNotFound(f"SQLite database {path!r} does not exist; check the path in {url!r}")
    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"
    engine = sa.create_engine(
        "sqlite://", creator=lambda: sqlite3.connect(uri, uri=True, check_same_thread=False), poolclass=sa.pool.NullPool
    )

    def floor(x):
        # SQLAlchemy replaces SQLite's floor() with Python's math.floor, which fails on NULL
        # and turns a real into an integer; SQLite's own keeps both.
        return None if x is None else x if isinstance(x, int) else float(math.floor(x))

    @sa.event.listens_for(engine, "connect")
    def _functions(dbapi_connection, _record):
        dbapi_connection.create_function("floor", 1, floor, deterministic=True)
        # SQLite has no statistical aggregates; these run inside SQLite's own process, like
        # its built-in ones, summing exactly (fsum) so the figures match DuckDB's.
        dbapi_connection.create_aggregate("stddev_samp", 1, _StddevSamp)
        dbapi_connection.create_aggregate("corr", 2, _Corr)
        dbapi_connection.create_aggregate("qar_exact_sum", 2, _ExactSum)

    return engine


class _ExactSum:
    """Σ x·y over integers, in Python's unbounded integers; as text (SQLite's integers stop at
    2^63), NULL when no row has both."""

    def __init__(self):
        self.total: int | None = None

    def step(self, x, y):
        if x is not None and y is not None:
            self.total = (self.total or 0) + int(x) * int(y)

    def finalize(self):
        return None if self.total is None else str(self.total)


class _StddevSamp:
    """The sample standard deviation of the non-NULL values (NULL for fewer than two)."""

    def __init__(self):
        self.xs: list[float] = []

    def step(self, x):
        if x is not None:
            self.xs.append(float(x))

    def finalize(self):
        n = len(self.xs)
        if n < 2:
            return None
        mean = math.fsum(self.xs) / n
        return math.sqrt(math.fsum((x - mean) ** 2 for x in self.xs) / (n - 1))


class _Corr:
    """Pearson's r over the pairs where both values are non-NULL (NULL when undefined)."""

    def __init__(self):
        self.pairs: list[tuple[float, float]] = []

    def step(self, x, y):
        if x is not None and y is not None:
            self.pairs.append((float(x), float(y)))

    def finalize(self):
        n = len(self.pairs)
        if n < 2:
            return None
        mx = math.fsum(x for x, _ in self.pairs) / n
        my = math.fsum(y for _, y in self.pairs) / n
        sxy = math.fsum((x - mx) * (y - my) for x, y in self.pairs)
        sxx = math.fsum((x - mx) ** 2 for x, _ in self.pairs)
        syy = math.fsum((y - my) ** 2 for _, y in self.pairs)
        return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


#: Python's own sqlite3: no extra, no server.
ENGINE = Engine(DIALECT, schemes=("sqlite",), local_file=local_file, sqlalchemy_engine=read_only_engine)
