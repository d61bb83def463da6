"""Apache Spark through Spark Connect (``sc://host:port``; engines/spark.py). Runs in the test
suite against the Connect server scripts/spark.sh starts from the pyspark package."""

from qar_sql.engines.dialects.base import BACKTICKS, Dialect
from qar_sql.engines.dialects.unit import Engine, ServerRecipe

DIALECT = Dialect(
    "spark",
    **BACKTICKS,
    # In a string literal a backslash escapes, and two adjacent literals 'a''b' are
    # concatenated to 'ab': a quote inside is written \'.
    string_backslash_escapes=True,
    string_quote_escape="\\'",
    # NULL sorts first in ascending order.
    nulls_first=True,
    # Spark SQL has neither "double precision" nor "varchar" (without a length) in a cast.
    double="double",
    text="string",
    # Several COUNT(DISTINCT)s in one statement make Spark copy every row once per column (its
    # Expand operator) and aggregate them together: profiling 10,000,000 x 18 that way ran
    # 967 s, one statement per column takes seconds each.
    profile_columns=1,
    executable=True,
    sqlglot="spark",
)

ENGINE = Engine(
    DIALECT,
    schemes=("sc",),
    extra="spark",
    modules=("pyspark",),
    distributions=("pyspark",),
    # Spark Connect reads its own URL: ;-parameters (a Databricks token) follow the path.
    url_reading="plain",
    opener="qar_sql.engines.spark:open_spark",
    test_server=ServerRecipe("QAR_TEST_SPARK_URL", "", "scripts/spark.sh"),
    # (SparkDatabase: one Connect session, Database.query_many)
    one_at_a_time="Spark Connect runs one statement at a time and spreads each over the cluster",
)
