-- One row per (quasi-identifier, class size): how many equivalence classes of that size it has.
-- qi is the quasi-identifier's index; it groups by its columns' codes (c0, c1, ...) or, on
-- engines without a place to keep codes, by the columns themselves (t."name"; scan.py).
-- A QI with a cube is counted from that cube: a GROUP BY over a superset of its columns, whose
-- cells carry their record counts n; summing n over the QI's columns gives the same class sizes
-- from a much smaller input (lattice.py).
{# A QI with a residual is counted over the records outside the singletons of one of its
    subsets (residual_plan in pushdown/): scan.py adds those singletons back, one class each.
    A Jinja comment, so the SQL that qar sql shows is unchanged. -#}
{% from "default/_classes.sql" import encoded_cte, classes_by, residual_rows %}
{% set residuals = residuals if residuals is defined else [] %}
{% if encode_sql or cubes or residuals %}
with
{% endif %}
{% if encode_sql %}
{{ encoded_cte(encode_sql, dialect) }}{{ "," if cubes or residuals }}
{% endif %}
{% for cube in cubes %}
{{ cube.name }} as {{ "materialized " if dialect.cte_materialized }}(
  select {{ cube.codes | join(", ") }}, count(*) as n
  from {{ encoded }}
  group by {{ cube.codes | join(", ") }}
){{ "," if not loop.last or residuals }}
{% endfor %}
{% for r in residuals %}
{{ r.name }} as {{ "materialized " if dialect.cte_materialized }}(
{{ residual_rows(encoded, r.codes, r.keep) | indent(2, true) }}
){{ "," if not loop.last }}
{% endfor %}
{% call(qi) classes_by(qis, "size") %}
{% if qi.cube %}
  select cast(sum(n) as {{ dialect.bigint }}) as size
  from {{ qi.cube }}
{% elif qi.residual %}
  select count(*) as size
  from {{ qi.residual }}
{% else %}
  select count(*) as size
  from {{ encoded }}
{% endif %}
  group by {{ qi.codes | join(", ") }}
{% endcall %}
