"""DuckDB: the embedded engine files are read with; everything runs, and is the reference."""

from qar_sql.engines.dialects.base import Dialect

DIALECT = Dialect(
    "duckdb",
    # Understands AS MATERIALIZED, and keeps session temp tables in memory on a read-only
    # connection: the codes are materialised once per audit.
    cte_materialized=True,
    temp_tables=True,
    executable=True,
    sqlglot="duckdb",
)
