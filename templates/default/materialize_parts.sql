-- Engines with temp tables, wide tables only: a codes table joined from parts (each the codes
-- of some columns with the row number r), each part's codes listed in part.columns as (its
-- c0, c1, ... number, the column's place among all quasi-identifier columns) and renamed to the
-- latter. The scan makes one per batch of QIs, of the columns they read; pruned scans and qar
-- risk one of all columns. With rows (qar risk: risk_rows.sql's table), each row's weight w
-- and position r come along from it, matched on its row number rid. With keep_r (a level of
-- scan.join_parts_statements' tree), the row number r comes along, as in a part.
{% set rows = rows if rows is defined else none %}
{% set keep_r = keep_r if keep_r is defined else false %}
create temp table {{ q(name) }} as
select
{% for part in parts %}
{% set outer = loop %}
{% for local, i in part.columns %}
  p{{ outer.index0 }}.c{{ local }} as c{{ i }}{{ "," if not (outer.last and loop.last) or rows or keep_r }}
{% endfor %}
{% endfor %}
{% if rows %}
  rw.w,
  rw.r
{% elif keep_r %}
  p0.r
{% endif %}
from {{ q(parts[0].name) }} as p0
{% for part in parts[1:] %}
join {{ q(part.name) }} as p{{ loop.index }}
  on p{{ loop.index }}.r = p0.r
{% endfor %}
{% if rows %}
join {{ q(rows) }} as rw
  on rw.rid = p0.r
{% endif %}
