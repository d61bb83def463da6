-- One row per (column combination, class size): how many equivalence classes of that size the
-- combination has. With drop_null, rows with NULL (code -1) in one of the combination's columns
-- are left out of that combination, as Pastore et al. count.
{% from "default/_classes.sql" import encoded_cte, classes_by %}
{% if encode_sql %}
with {{ encoded_cte(encode_sql, dialect) }}
{% endif %}
{% call(combo) classes_by(combos, "size") %}
  select count(*) as size
  from {{ encoded }}
{% if drop_null %}
  where {% for code in combo.codes %}{{ code }} <> -1{{ " and " if not loop.last }}{% endfor +%}
{% endif %}
  group by {{ combo.codes | join(", ") }}
{% endcall %}
