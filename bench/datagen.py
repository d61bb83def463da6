"""Seeded synthetic data for the speed benchmarks: skewed categorical columns.

``skewed_table(n_rows, n_cols, seed)`` returns ``{name: numpy object array}`` where each column
draws from its own vocabulary (2 to 300 distinct values) with Zipf-like shares, so some value
combinations are common and many are rare — the shape that makes re-identification scans hard.
About 0.5% of a third of the columns are NULL (``None``), because NULL is a value of its own in
the scan and the benchmarks must exercise it.

``write_duckdb`` and ``write_postgres`` load such a dict into a real table. The data is made by
the benchmark each run and never committed.
"""

from __future__ import annotations

import numpy as np

#: Distinct non-NULL values per column (cycled when there are more than 18 columns): a spread
#: from binary flags to postcode-like columns, like a real survey extract.
CARDINALITIES = (2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 60, 90, 120, 200, 300)


def _shares(k: int, exponent: float) -> np.ndarray:
    """Zipf-like shares of k values: the r-th most common value has weight 1 / r**exponent."""
    w = 1.0 / np.arange(1, k + 1, dtype=float) ** exponent
    return w / w.sum()


def column_name(j: int) -> str:
    return f"c{j:02d}"


def skewed_table(n_rows: int, n_cols: int = 18, seed: int = 20240601) -> dict[str, np.ndarray]:
    """``n_cols`` skewed categorical columns of ``n_rows`` values each (object arrays of ``str``
    with ``None`` for NULL), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    data: dict[str, np.ndarray] = {}
    for j in range(n_cols):
        k = CARDINALITIES[j % len(CARDINALITIES)]
        exponent = rng.uniform(0.6, 1.4)
        # Object array of shared str objects: indexing it copies pointers, not strings.
        vocab = np.array([f"v{j}_{i}" for i in range(k)], dtype=object)
        codes = rng.choice(k, size=n_rows, p=_shares(k, exponent))
        col = vocab[codes]
        if j % 3 == 2:
            col[rng.random(n_rows) < 0.005] = None
        data[column_name(j)] = col
    return data


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def write_duckdb(path: str, table: str, data: dict[str, np.ndarray]) -> None:
    """Create (or replace) ``table`` in the DuckDB file ``path`` with VARCHAR columns."""
    import duckdb
    import pyarrow as pa

    arrow = pa.table({name: pa.array(col, type=pa.string()) for name, col in data.items()})
    con = duckdb.connect(path)
    try:
        con.register("qar_bench_src", arrow)
        con.execute(f"create or replace table {_quote(table)} as select * from qar_bench_src")
        con.unregister("qar_bench_src")
    finally:
        con.close()


def libpq_url(url: str) -> str:
    """A SQLAlchemy PostgreSQL URL (``postgresql+psycopg://…``) as a libpq conninfo URL."""
    scheme, rest = url.split("://", 1)
    return "postgresql://" + rest if scheme.startswith("postgres") else url


def write_postgres(url: str, table: str, data: dict[str, np.ndarray]) -> None:
    """Create ``table`` (``schema.table`` allowed) with text columns and fill it with COPY."""
    import psycopg
    from psycopg import sql

    parts = table.split(".", 1)
    ident = sql.Identifier(*parts)
    names = list(data)
    columns = sql.SQL(", ").join(sql.SQL("{} text").format(sql.Identifier(c)) for c in names)
    with psycopg.connect(libpq_url(url)) as con:
        with con.cursor() as cur:
            cur.execute(sql.SQL("create table {} ({})").format(ident, columns))
            with cur.copy(sql.SQL("copy {} from stdin").format(ident)) as copy:
                for row in zip(*(data[c] for c in names)):
                    copy.write_row(row)
            cur.execute(sql.SQL("analyze {}").format(ident))
