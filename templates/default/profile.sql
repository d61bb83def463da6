-- One row: the number of rows, then for each quasi-identifier column its non-NULL count and
-- its number of distinct non-NULL values (to report empty, all-NULL and constant columns).
select
  count(*) as row_count
{% for col in columns %}
  , count({{ q(col) }}) as nonnull_{{ loop.index0 }}
  , count(distinct {{ q(col) }}) as distinct_{{ loop.index0 }}
{% endfor %}
from {{ relation }} as t
