{#- A column's dictionary: each distinct non-NULL value v with its code 0, 1, ... in the engine's
    value order. encode.sql codes every QI column with it and value_codes.sql reads it back, so
    the two number values the same way by construction. Import "with context" (uses q). -#}
{% macro dictionary(column, relation, alias) %}
select
  v,
  row_number() over (order by v) - 1 as code
from (
  select distinct {{ q(column) }} as v
  from {{ relation }}
  where {{ q(column) }} is not null
) {{ alias }}
{% endmacro %}
