"""DuckDB: the embedded engine files are read with; everything runs, and is the reference."""

from qar_sql.engines.dialects.base import Dialect
from qar_sql.engines.dialects.unit import Engine

DIALECT = Dialect(
    "duckdb",
    # Understands AS MATERIALIZED, and keeps session temp tables in memory on a read-only
    # connection: the codes are materialised once per audit.
    cte_materialized=True,
    temp_tables=True,
    unpivot=True,
    executable=True,
    array_relation=True,
    sqlglot="duckdb",
)


def local_file(url: str) -> str | None:
    """``duckdb:///path`` → path."""
    return (url[len("duckdb:///") :] or None) if url.startswith("duckdb:///") else None


#: Files and ``duckdb:///file.duckdb``, opened read-only (engines/source.py); DuckDB is a
#: dependency, not an extra.
ENGINE = Engine(
    DIALECT,
    schemes=("duckdb",),
    opener="qar_sql.engines.source:open_duckdb_url",
    local_file=local_file,
    # (DuckDBDatabase: one connection, Database.query_many; its batch sizes do not depend on
    # --jobs either: the codes are in a temp table, pushdown/scan.default_batch_size)
    one_at_a_time="DuckDB runs one statement at a time and parallelises inside it",
)
