-- One row per (column combination, class size): how many equivalence classes of that size the
-- combination has. With drop_null, rows with NULL (code -1) in one of the combination's columns
-- are left out of that combination, as Pastore et al. count.
{% if encode_sql %}
with encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
)
{% endif %}
{% for combo in combos %}
select
  {{ combo.index }} as qi,
  size,
  count(*) as classes
from (
  select count(*) as size
  from {{ encoded }}
{% if drop_null %}
  where {% for code in combo.codes %}{{ code }} <> -1{{ " and " if not loop.last }}{% endfor +%}
{% endif %}
  group by {{ combo.codes | join(", ") }}
) q{{ combo.index }}
group by size
{{ "union all" if not loop.last }}
{% endfor %}
