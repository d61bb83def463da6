-- One row per (column, decile): the largest original value in each of the ten ntile groups of a
-- numeric column, the cut points that bin its original and released values alike for the
-- two-way tables of the information-loss report.
{% for c in columns %}
select
  {{ loop.index0 }} as col,
  d.nt,
  max(d.v) as edge
from (
  select
    t.{{ c }} as v,
    ntile(10) over (order by t.{{ c }}) as nt
  from {{ relation }} as t
  where t.{{ c }} is not null
) as d
group by d.nt
{{ "union all" if not loop.last }}
{% endfor %}
