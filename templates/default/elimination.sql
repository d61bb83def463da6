-- Block elimination, pushed down. {{ removed }} lists the removed records (r, pos): pos is the
-- step (1, 2, ...) at which record r is removed. For each QI, one row per removal step with the
-- number of classes that step empties (a class empties when its last member goes, at the largest
-- pos among its members). H after removing the first k records = H − classes emptied at ≤ k.
{% from "default/_classes.sql" import with_encoded, classes_by %}
{{ with_encoded(encode_sql, dialect) }}
ranked as {{ "materialized " if dialect.cte_materialized }}(
  select
    e.*,
    coalesce(x.pos, {{ never }}) as pos
  from {{ encoded }} as e
  left join {{ removed }} as x
    on e.r = x.r
)
{% call(qi) classes_by(qis, "last_pos", where="last_pos <= " ~ kmax) %}
  select max(pos) as last_pos
  from ranked
  group by {{ qi.codes | join(", ") }}
{% endcall %}
