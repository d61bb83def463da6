-- One row per (quasi-identifier, class size): how many equivalence classes of that size it has.
-- qi is the quasi-identifier's index; it groups by its columns' codes (c0, c1, ...) or, on
-- engines without a place to keep codes, by the columns themselves (t."name"; scan.py).
-- A QI with a cube is counted from that cube: a GROUP BY over a superset of its columns, whose
-- cells carry their record counts n; summing n over the QI's columns gives the same class sizes
-- from a much smaller input (lattice.py).
{% from "default/_classes.sql" import encoded_cte, classes_by %}
{% if encode_sql or cubes %}
with
{% endif %}
{% if encode_sql %}
{{ encoded_cte(encode_sql, dialect) }}{{ "," if cubes }}
{% endif %}
{% for cube in cubes %}
{{ cube.name }} as {{ "materialized " if dialect.cte_materialized }}(
  select {{ cube.codes | join(", ") }}, count(*) as n
  from {{ encoded }}
  group by {{ cube.codes | join(", ") }}
){{ "," if not loop.last }}
{% endfor %}
{% call(qi) classes_by(qis, "size") %}
{% if qi.cube %}
  select cast(sum(n) as {{ dialect.bigint }}) as size
  from {{ qi.cube }}
{% else %}
  select count(*) as size
  from {{ encoded }}
{% endif %}
  group by {{ qi.codes | join(", ") }}
{% endcall %}
