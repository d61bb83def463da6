-- Influence score I(i) of every record, pushed down: the weighted tally Σ_j g_j · U(i, j) over the
-- few QIs with g_j = ∂T̂/∂θ(j) ≠ 0, minus Σ_j g_j θ(j), over L − 1. Weights are exact decimals so
-- records with the same uniqueness flags get bit-identical scores (ties break by key order, r).
-- Returns (r, tally) best first, ties by r: the top {{ limit if limit is not none else "all" }} records with
-- a positive tally, or every record with a non-zero one (records not returned score 0).
with
{% if encode_sql %}
encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
),
{% endif %}
weights as (
{% for w in weights %}
  select {{ w.index }} as qi, cast({{ w.g }} as {{ dialect.exact_decimal }}) as g
  {{ "union all" if not loop.last }}
{% endfor %}
),
pairs as (
{% for qi in qis %}
  select {{ qi.index }} as qi, min(r) as r
  from {{ encoded }}
  group by {{ qi.codes | join(", ") }}
  having count(*) = 1
  {{ "union all" if not loop.last }}
{% endfor %}
),
tally as (
  select pairs.r, sum(weights.g) as s
  from pairs
  join weights
    on pairs.qi = weights.qi
  group by pairs.r
)
select
  r,
  s
from tally
{% if positive_only %}
where s > 0
{% else %}
where s <> 0
{% endif %}
order by s desc, r
{% if limit is not none %}
limit {{ limit }}
{% endif %}
