-- qar risk on engines with temp tables, wide tables only: the key and sensitive columns copied
-- to a session temp table as v0, v1, ... with each record's weight w and position r (as
-- risk_encode.sql makes them) and a row number rid, so that parts of the columns can be coded
-- separately (encode.sql) and joined back row by row (materialize_parts.sql with rows).
create temp table {{ q(name) }} as
select
  row_number() over () as rid,
{% if weight %}
  cast(t.{{ q(weight) }} as {{ dialect.double }}) as w,
{% else %}
  cast(1 as {{ dialect.double }}) as w,
{% endif %}
{% if order_by %}
  row_number() over (order by {{ order_by | join(", ") }}) - 1 as r,
{% else %}
  cast(0 as {{ dialect.bigint }}) as r,
{% endif %}
{% for col in columns %}
  t.{{ q(col) }} as v{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
from {{ relation }} as t
