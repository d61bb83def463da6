-- One row per source row, each quasi-identifier column replaced by an integer code.
-- NULL gets code -1, a value of its own (GROUP BY semantics); other values are numbered 0, 1, ...
-- Small integer keys make the many GROUP BYs of the scan cheap, whatever the column types.
-- With order_by (record-level commands), r numbers the records 0, 1, ... in key order; with
-- row_id instead, r is that expression (DuckDB's rowid: an id, not a position in key order).
{% from "default/_dictionary.sql" import dictionary with context %}
with
{% for col in columns %}
  d{{ loop.index0 }} as (
{{ dictionary(col, relation, "s" ~ loop.index0) | indent(4, true) }}
  ){{ "," if not loop.last }}
{% endfor %}
select
{% for col in columns %}
  coalesce(d{{ loop.index0 }}.code, -1) as c{{ loop.index0 }}{{ "," if not loop.last or order_by or (row_id is defined and row_id) }}
{% endfor %}
{% if order_by %}
  row_number() over (order by {{ order_by | join(", ") }}) - 1 as r
{% elif row_id is defined and row_id %}
  {{ row_id }} as r
{% endif %}
from {{ relation }} as t
{% for col in columns %}
left join d{{ loop.index0 }}
  on t.{{ q(col) }} = d{{ loop.index0 }}.v
{% endfor %}
