{#- args: relation, qis -#}
{#- The whole-audit-in-SQL templates (insql_risk.sql, insql_qi_theta.sql) share this part, and the
    dbt package (integrations/dbt) gets it as the macro qar.insql_counts (scripts/make_dbt_macros.py).
    For each quasi-identifier qi: h, its number of classes (GROUP BY semantics: NULL is a value of
    its own), and s, its number of singletons (classes of one record). Each qi is a mapping with
    position (its index in itertools.combinations order), exprs (its quoted columns) and label
    (its column names as a string literal). -#}
{% for qi in qis %}
select
  {{ qi.position }} as qi,
  {{ qi.label }} as label,
  count(*) as h,
  coalesce(sum(case when g.size = 1 then 1 else 0 end), 0) as s
from (
  select count(*) as size
  from {{ relation }}
  group by {{ qi.exprs | join(", ") }}
) as g
{{ "union all" if not loop.last }}
{% endfor %}
