-- qar risk: one row per source row, as encode.sql codes it (each quasi-identifier and sensitive
-- column replaced by its integer code in value order, NULL = -1), plus w, the record's sampling
-- weight as a double (1 without --weight), and r, the record's position (file order, or key
-- order with order_by) for the per-record output.
{% from "default/_dictionary.sql" import dictionaries, coded_columns, dictionary_joins with context %}
with
{{ dictionaries(columns, relation) }}
select
{{ coded_columns(columns, true) }}
{% if weight %}
  cast(t.{{ q(weight) }} as {{ dialect.double }}) as w,
{% else %}
  cast(1 as {{ dialect.double }}) as w,
{% endif %}
{% if order_by %}
  row_number() over (order by {{ order_by | join(", ") }}) - 1 as r
{% elif row_id %}
  {{ row_id }} as r
{% else %}
  cast(0 as {{ dialect.bigint }}) as r
{% endif %}
from {{ relation }} as t
{{ dictionary_joins(columns) }}
