{#- A column's dictionary: each distinct non-NULL value v with its code 0, 1, ... in the engine's
    value order. encode.sql codes every QI column with it and value_codes.sql reads it back, so
    the two number values the same way by construction. Import "with context" (uses q).
    The other macros are the pieces of a coding query (encode.sql, risk_encode.sql): the
    dictionaries as CTEs d0, d1, ..., the coded columns c0, c1, ... (NULL coded -1), and the
    joins of the source rows t to the dictionaries. -#}
{% macro dictionary(column, relation, alias) %}
select
  v,
  row_number() over (order by v) - 1 as code
from (
  select distinct {{ q(column) }} as v
  from {{ relation }} as t
  where {{ q(column) }} is not null
) {{ alias }}
{% endmacro %}
{% macro dictionaries(columns, relation) %}
{% for col in columns %}
  d{{ loop.index0 }} as (
{{ dictionary(col, relation, "s" ~ loop.index0) | indent(4, true) }}
  ){{ "," if not loop.last }}
{% endfor %}
{% endmacro %}
{#- more: a comma after the last coded column too, when more columns follow. -#}
{% macro coded_columns(columns, more) %}
{% for col in columns %}
  coalesce(d{{ loop.index0 }}.code, -1) as c{{ loop.index0 }}{{ "," if not loop.last or more }}
{% endfor %}
{% endmacro %}
{% macro dictionary_joins(columns) %}
{% for col in columns %}
left join d{{ loop.index0 }}
  on t.{{ q(col) }} = d{{ loop.index0 }}.v
{% endfor %}
{% endmacro %}
