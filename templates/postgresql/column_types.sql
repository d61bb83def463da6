-- PostgreSQL names the type function pg_typeof and returns regtype, so it is cast to text.
select
{% for col in columns %}
  pg_typeof(t.{{ q(col) }})::text as type_{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
from (select 1 as one) as qar_one
left join (select * from {{ relation }} as qar_r limit 1) as t
  on true
