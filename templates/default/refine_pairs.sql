-- Exact DT for a few candidate records (influence refinement): on which of the top-M QIs by θ is
-- each candidate alone in its class? Returns (qi, r) for the candidates {{ candidates | join(", ") }}.
{% if encode_sql %}
with encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
)
{% endif %}
select qi, r
from (
{% for qi in qis %}
  select {{ qi.index }} as qi, min(r) as r
  from {{ encoded }}
  group by {{ qi.codes | join(", ") }}
  having count(*) = 1
  {{ "union all" if not loop.last }}
{% endfor %}
) singles
where r in ({{ candidates | join(", ") }})
