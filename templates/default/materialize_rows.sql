-- Engines with temp tables, wide tables only: the quasi-identifier columns copied to a session
-- temp table as v0, v1, ... with a row number r, so that parts of the columns can be coded
-- separately (materialize_parts.sql) and joined back row by row.
create temp table {{ q(name) }} as
select
  row_number() over () as r,
{% for col in columns %}
  {{ q(col) }} as v{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
from {{ relation }} as t
