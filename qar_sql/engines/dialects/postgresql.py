"""PostgreSQL (12 and later): runs in the test suite, through SQLAlchemy and psycopg."""

from qar_sql.engines.dialects.base import Dialect
from qar_sql.engines.dialects.unit import Engine, ServerRecipe

DIALECT = Dialect(
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
    # PostgreSQL inlines subqueries; offset 0 keeps one a subquery.
    fence="offset 0",
    # Text sorts by the database's collation unless told otherwise.
    byte_order=' collate "C"',
    # 7 / 2 = 3 on integers.
    integer_division=True,
    # psycopg sends a list as an array: unnest(cast(%(r)s as bigint[]), ...) is a relation.
    array_relation=True,
    executable=True,
    sqlglot="postgres",
)

ENGINE = Engine(
    DIALECT,
    # SQLAlchemy reads postgresql://; postgres:// is the libpq spelling people write.
    schemes=("postgresql", "postgres"),
    url_forms=("postgresql+psycopg",),
    extra="postgres",
    modules=("psycopg",),
    distributions=("psycopg",),
    # scripts/test.sh starts the server and creates the role qar_test.
    test_server=ServerRecipe(
        "QAR_TEST_PG_URL", "postgresql+psycopg://qar_test:qar_test@localhost:5432/qar_test", "scripts/test.sh"
    ),
)
