-- One row per (quasi-identifier, class size): how many equivalence classes of that size it has.
-- qi is the quasi-identifier's index; its columns are the coded columns it groups by.
{% if encode_sql %}
with encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
)
{% endif %}
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  size,
  count(*) as classes
from (
  select count(*) as size
  from {{ encoded }}
  group by {{ qi.codes | join(", ") }}
) q{{ qi.index }}
group by size
{{ "union all" if not loop.last }}
{% endfor %}
