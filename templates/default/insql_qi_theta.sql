{#- args: relation, qis, double -#}
-- One row per quasi-identifier (QI): qi (its index), columns (its column names), classes (H, the
-- number of distinct value combinations, NULL a value of its own), singletons (S, the records
-- unique on it) and theta = H / L (METHOD.md section 1). The same SQL as the dbt macro
-- qar.qi_theta (integrations/dbt, generated from this file by scripts/make_dbt_macros.py).
with
counts as (
{% include "default/_insql_counts.sql" %}
),
n_rows as (
  select count(*) as l
  from {{ relation }}
)
select
  c.qi as qi,
  c.label as {{ adapter.quote("columns") }},
  c.h as classes,
  c.s as singletons,
  cast(c.h as {{ double }}) / cast(nullif(n.l, 0) as {{ double }}) as theta
from counts as c
cross join n_rows as n
order by c.qi
