"""ClickHouse in process through chdb (``chdb:///folder``; engines/clickhouse.py). Runs in the
test suite; chdb is the ``clickhouse`` extra. Names and values are case-sensitive and text
compares bytes, as in DuckDB; NULL sorts last; Nullable columns group NULLs together."""

from qar_sql.engines.dialects.base import Dialect
from qar_sql.engines.dialects.unit import Engine

DIALECT = Dialect(
    "clickhouse",
    # MD5 gives 16 bytes, not hex text
    row_hash="lower(hex(MD5({x})))",
    # Inside a quoted name and a string literal a backslash escapes.
    backslash_escapes=True,
    string_backslash_escapes=True,
    # An outer join's unmatched side is NULL, not the type's default (0, ''); a cast of a
    # Nullable value keeps NULL instead of failing; an aggregate over no rows is NULL (sum()
    # would be 0): the SQL the templates assume.
    session_sql=(
        "set join_use_nulls = 1",
        "set cast_keep_nullable = 1",
        "set aggregate_functions_null_for_empty = 1",
        # Text parsed as a number (the PRNG's float literals, cast from text) is rounded
        # correctly, as everywhere else; the fast default parser can miss by one ulp.
        "set precise_float_parsing = 1",
        # Short-circuit evaluation of the PRNG's nested CASEs (the normal deviates' tails) ran
        # out of memory on a 20-row noise release; evaluated plainly it takes 0.1 s.
        "set short_circuit_function_evaluation = 'disable'",
        # A batch of 256 QIs is one long statement: past the default limits on query text
        # (256 KiB), syntax tree (50,000 elements) and plan optimisations (10,000) of an
        # interactive client.
        "set max_query_size = 67108864",
        "set max_ast_elements = 10000000",
        "set max_expanded_ast_elements = 10000000",
        "set query_plan_max_optimizations_to_apply = 1000000",
    ),
    # The settings above go into an emitted view's SELECT too (treat/whatif.py's emit_sql).
    settings_clause=True,
    # Reads and settings only, from here on: no statement can write (readonly = 2 still allows
    # session temporary tables).
    read_only_sql="set readonly = 2",
    # Integer overflow wraps silently (no error): the PRNG keeps every intermediate below 2^62.
    integer_wraps=True,
    # The analyzer merges subqueries, so the PRNG's layers (each referencing a lane three times)
    # were inlined into one expression: a noise release over 5 rows outgrew 13 GB. A LIMIT it
    # cannot drop keeps each layer a subquery (1.8 s).
    fence="limit 9223372036854775807",
    executable=True,
    sqlglot="clickhouse",
)

#: In process: no server to start.
ENGINE = Engine(
    DIALECT,
    schemes=("chdb",),
    extra="clickhouse",
    modules=("chdb",),
    distributions=("chdb",),
    url_reading="plain",
    opener="qar_sql.engines.clickhouse:open_chdb",
    # (ClickHouseDatabase: one session behind a lock, Database.query_many)
    one_at_a_time="chdb runs one statement at a time in this process and parallelises inside it",
)
