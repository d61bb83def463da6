-- One row: the declared type name of every listed column of the relation. The left join keeps
-- one row even for an empty table, and typeof reports the column's type even for NULL.
select
{% for col in columns %}
  typeof(t.{{ q(col) }}) as type_{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
from (select 1 as one) as qar_one
left join (select * from {{ relation }} as qar_r limit 1) as t
  on true
