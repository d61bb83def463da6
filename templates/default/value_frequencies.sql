-- For each quasi-identifier column j: how many of its values (NULL counted as one value) occur
-- in exactly n records. A few hundred rows at most per column kind of skew; used only to plan
-- which QIs to count from cubes (lattice.py), never in a result.
select
  j,
  n,
  count(*) as value_count
from (
{% for col in columns %}
  select {{ loop.index0 }} as j, count(*) as n
  from {{ relation }} as t
  group by {{ q(col) }}
  {{ "union all" if not loop.last }}
{% endfor %}
) f
group by j, n
