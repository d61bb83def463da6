-- ClickHouse has no typeof(); toTypeName() wraps the type in Nullable(...) and LowCardinality(...), which are unwrapped here so the type name reads as elsewhere (Int64, Float64, String).
-- One row: the declared type name of every listed column of the relation. The left join keeps
-- one row even for an empty table.
select
{% for col in columns %}
  replaceRegexpOne(toTypeName(assumeNotNull(t.{{ q(col) }})), '^LowCardinality\\((.*)\\)$', '\\1') as type_{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
from (select 1 as one) as qar_one
left join (select * from {{ relation }} limit 1) as t
  on true
