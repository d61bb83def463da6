-- DuckDB, wide tables: the profile of some columns of one type, one pass over the table. The
-- columns, named v<their place among all QI columns>, become (name, value) rows; UNPIVOT leaves
-- out NULLs, so a column's rows are its non-NULL values and a column of NULLs has no row. The
-- values keep their type, so DISTINCT compares them as COUNT(DISTINCT) on the column does
-- (profile.sql). One COUNT(DISTINCT) per column cost DuckDB time with the table's width in
-- every statement of 32 columns: quadratic in columns.
select
  name,
  count(*) as nonnull,
  count(distinct value) as distinct_values
from (
  unpivot (
    select
{% for i, col in columns %}
      t.{{ q(col) }} as v{{ i }}{{ "," if not loop.last }}
{% endfor %}
    from {{ relation }} as t
  )
  on {% for i, _ in columns %}v{{ i }}{{ ", " if not loop.last }}{% endfor %}
  into name name value value
) as u
group by name
