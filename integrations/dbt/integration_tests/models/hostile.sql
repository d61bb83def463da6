-- 300 rows over six columns whose names break naive quoting: a double quote, a backtick, a space,
-- a reserved word, an apostrophe and a non-ASCII letter. Written as SQL (not a seed): dbt's seed
-- loader quotes column names with adapter.quote(), which does not double a quote either. The
-- values are polynomials of i modulo small numbers, the same on every warehouse.
select
  (i * i) % 7 as "we""ird",
  (i * i * i + 3 * i) % 11 as "back`tick",
  (i * 5 + i * i) % 13 as "zip code",
  (i * i) % 3 as "select",
  (i * 7 + i * i * i) % 5 as "it's",
  (i * 11 + i * i) % 9 as "ü"
from generate_series(1, 300) as g(i)
