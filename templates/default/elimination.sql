-- Block elimination, pushed down. {{ removed }} lists the removed records (r, pos): pos is the
-- step (1, 2, ...) at which record r is removed. For each QI, one row per removal step with the
-- number of classes that step empties (a class empties when its last member goes, at the largest
-- pos among its members). H after removing the first k records = H − classes emptied at ≤ k.
with
{% if encode_sql %}
encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
),
{% endif %}
ranked as {{ "materialized " if dialect.cte_materialized }}(
  select
    e.*,
    coalesce(x.pos, {{ never }}) as pos
  from {{ encoded }} as e
  left join {{ removed }} as x
    on e.r = x.r
)
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  last_pos,
  count(*) as classes
from (
  select max(pos) as last_pos
  from ranked
  group by {{ qi.codes | join(", ") }}
) q{{ qi.index }}
where last_pos <= {{ kmax }}
group by last_pos
{{ "union all" if not loop.last }}
{% endfor %}
