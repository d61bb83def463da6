"""The warehouses qar compiles for but does not run here (no server in the test suite):
every rendered statement is parsed by sqlglot in the warehouse's dialect, and ``qar sql
--dialect NAME`` prints what would run. Each is one :class:`Dialect` with its flags."""

import dataclasses

from qar_sql.engines.dialects import spark
from qar_sql.engines.dialects.base import BACKTICKS, Dialect
from qar_sql.engines.dialects.unit import Engine

# Snowflake: double-quoted identifiers are case-sensitive, which is what we want for exact
# names; a backslash escapes inside a string literal.
SNOWFLAKE = Dialect("snowflake", string_backslash_escapes=True, sqlglot="snowflake")

# BigQuery quotes with backticks, as MySQL and Spark do, but escapes a backtick inside with a
# backslash; its NUMERIC keeps only 9 decimal places, BIGNUMERIC 38.
BIGQUERY = Dialect(
    "bigquery",
    **(BACKTICKS | {"quote_escape": "\\`"}),
    backslash_escapes=True,
    string_backslash_escapes=True,
    string_quote_escape="\\'",
    exact_decimal="bignumeric",
    double="float64",
    text="string",
    sqlglot="bigquery",
)

# Trino: ANSI quoting and literals; integer / integer truncates; NULLs sort last.
TRINO = Dialect("trino", integer_division=True, sqlglot="trino")

# Databricks runs Spark SQL: Spark's quoting, literals, NULL order and type names (spark.py),
# compile-checked here (a Databricks workspace is also reached as Spark, through sc://…).
DATABRICKS = dataclasses.replace(spark.DIALECT, name="databricks", executable=False, sqlglot="databricks")

# Redshift: PostgreSQL 8's SQL, but a backslash escapes inside a string literal; integer /
# integer truncates; no MATERIALIZED CTEs.
REDSHIFT = Dialect("redshift", string_backslash_escapes=True, integer_division=True, sqlglot="redshift")

#: Snowflake and BigQuery have a driver extra (SQLAlchemy opens their URLs); none has a test server.
ENGINES = (
    Engine(
        SNOWFLAKE,
        schemes=("snowflake",),
        url_forms=("snowflake",),
        extra="snowflake",
        modules=("snowflake.sqlalchemy",),
        distributions=("snowflake-sqlalchemy",),
    ),
    Engine(
        BIGQUERY,
        schemes=("bigquery",),
        url_forms=("bigquery",),
        extra="bigquery",
        modules=("sqlalchemy_bigquery",),
        distributions=("sqlalchemy-bigquery",),
    ),
    Engine(TRINO),
    Engine(DATABRICKS),
    Engine(REDSHIFT),
)
