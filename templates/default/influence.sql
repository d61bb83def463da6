-- Influence score I(i) of every record, pushed down: the weighted tally Σ_j g_j · U(i, j) over the
-- few QIs with g_j = ∂T̂/∂θ(j) ≠ 0, minus Σ_j g_j θ(j), over L − 1. Weights are exact decimals so
-- records with the same uniqueness flags get bit-identical scores (ties break by key order).
-- Returns (r, tally{{ ", key columns" if key_join }}) best first: the top {{ limit if limit is not none else "all" }} records with a positive
-- tally, or every record with a non-zero one (records not returned score 0).
-- The (qi, r) pairs — record r is alone in its class of QI qi — come from {{ "the table " ~ pairs_table if pairs_table else "one GROUP BY per weighted QI" }}.
{% from "default/_singletons.sql" import singleton_pairs %}
{% from "default/_classes.sql" import with_encoded %}
{{ with_encoded(encode_sql, dialect) }}
weights as (
{% for w in weights %}
  select {{ w.index }} as qi, cast({{ w.g }} as {{ dialect.exact_decimal }}) as g
  {{ "union all" if not loop.last }}
{% endfor %}
),
{% if not pairs_table %}
pairs as (
{{ singleton_pairs(qis, encoded) }}
),
{% endif %}
tally as (
  select pairs.r, sum(weights.g) as s
  from {{ pairs_table or "pairs" }} as pairs
  join weights
    on pairs.qi = weights.qi
  group by pairs.r
){% if key_join %},
-- Only records scoring at least the k-th best score are joined to the table for their keys.
kth as (
  select min(s) as s
  from (select s from tally where s > 0 order by s desc limit {{ limit }}) best
),
tally_top as (
  select tally.r, tally.s
  from tally, kth
  where tally.s >= kth.s
){% endif %}
select
  tally.r,
  tally.s{% for k in key_join %},
  t.{{ q(k) }}{% endfor %}

{% if key_join %}
from tally_top as tally
join {{ relation }} as t
  on t.rowid = tally.r
{% else %}
from tally
{% endif %}
{% if positive_only %}
where tally.s > 0
{% else %}
where tally.s <> 0
{% endif %}
order by tally.s desc{% for k in key_join %}, t.{{ q(k) }}{% endfor %}{{ ", tally.r" if not key_join }}
{% if limit is not none %}
limit {{ limit }}
{% endif %}
