-- Uniqueness flags per record, packed: one row per (record r, word w) with at least one flag,
-- bits = Σ 2^(qi mod 62) over the QIs of word w on which record r is unique (distinct powers of
-- two, so the sum is the bitwise or). Records unique on no QI do not appear. Per-record tallies
-- only: Python deduplicates the patterns.
with
{% if encode_sql %}
encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
),
{% endif %}
pairs as (
{{ pairs_sql | indent(2, true) }}
)
select
  r,
  w,
  sum(bit) as bits
from pairs
group by r, w
order by r, w
