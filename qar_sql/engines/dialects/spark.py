"""Apache Spark through Spark Connect (``sc://host:port``; engines/spark.py). Runs in the test
suite against the Connect server scripts/spark.sh starts from the pyspark package."""

from qar_sql.engines.dialects.base import BACKTICKS, Dialect

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
