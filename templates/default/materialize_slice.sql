-- Engines with temp tables, wide tables only: some columns of the copied rows (materialize_rows.sql
-- or risk_rows.sql), with its row number, in a narrow temp table of their own, so that the part's
-- coding statement (encode.sql) reads only its columns: a statement naming a table of thousands
-- of columns in each of its dictionaries cost DuckDB time with the table's width.
create temp table {{ q(name) }} as
select
  t.{{ row_id }},
{% for col in columns %}
  t.{{ col }}{{ "," if not loop.last }}
{% endfor %}
from {{ relation }} as t
