{#- Shared pieces of the templates that count classes. render() drops the blank lines the macros
    leave behind. -#}

{#- The coded table as a CTE named "encoded" (no comma: the caller adds one when more follow). -#}
{% macro encoded_cte(encode_sql, dialect) %}
encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
){% endmacro %}

{#- A statement's "with", then the coded table as its first CTE when the statement codes the rows
    itself (encode_sql), with the comma for the caller's CTEs that follow. -#}
{% macro with_encoded(encode_sql, dialect) %}
with
{% if encode_sql %}
{{ encoded_cte(encode_sql, dialect) }},
{% endif %}
{% endmacro %}

{#- For each QI, one row per value of `value` (a class size, or the step that empties a class)
    with how many classes have it. The caller writes, for QI `qi`, the query that groups its
    classes and selects `value`; `where` filters the values. -#}
{% macro classes_by(qis, value, where=none) %}
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  {{ value }},
  count(*) as classes
from (
{{ caller(qi) }}
) q{{ qi.index }}
{% if where %}
where {{ where }}
{% endif %}
group by {{ value }}
{{ "union all" if not loop.last }}
{% endfor %}
{% endmacro %}

{#- The residual of a subset: the records (``keep``: the columns its QIs read) in the subset's
    classes of two or more, from the coded table. A record unique on the subset is unique on
    every QI that contains it, so those QIs need only these rows (prune.residual_plan). -#}
{% macro residual_rows(encoded, codes, keep) %}
select {% for c in keep %}e.{{ c }}{{ ", " if not loop.last }}{% endfor %}

from {{ encoded }} as e
join (
  select {{ codes | join(", ") }}
  from {{ encoded }}
  group by {{ codes | join(", ") }}
  having count(*) > 1
) as s
  on {% for c in codes %}e.{{ c }} = s.{{ c }}{{ " and " if not loop.last }}{% endfor %}
{% endmacro %}
