-- qar risk, per quasi-identifier of the batch: its cells (distinct combinations of the QI's
-- coded columns, NULL coded -1) and the records each cell matches. Two kinds of rows:
--   kind 0: (qi, cell, x = records in the cell, y = fk: records it matches, z = Fk: their weight);
--   kind 1: (qi, cell, x = sensitive column index, y = sensitive value code (-1 NULL),
--            z = matched records with that value).
-- missing = value: a cell matches itself only (GROUP BY semantics, NULL a value of its own).
-- missing = wildcard (sdcMicro): a NULL matches any value, so a cell matches every cell that
-- agrees with it where both are non-NULL. Cells are grouped by NULL pattern pat (bit i: the
-- QI's i-th column is NULL); for each ordered pair (pa, pb) of different patterns present, the
-- pb cells summed over the columns non-NULL in both are joined to the pa cells on those columns
-- (equi-joins, never a join on OR conditions). A QI without such pairs reads no pattern (0): its
-- sum of one term per column nests as deep as the QI is wide (DuckDB refuses 1,000 levels).
-- cell numbers the cells 0, 1, ... in code order: dense_rank over the codes numbers records
-- the same way (risk_record_cells.sql).
{% from "default/_risk.sql" import null_pattern, joined, on_keys with context %}
{% from "default/_classes.sql" import with_encoded %}
{{ with_encoded(encode_sql, dialect) }}
{% for qi in qis %}
{% set codes = qi.codes | join(", ") %}
{% set last_qi = loop.last %}
cells_{{ qi.index }} as {{ "materialized " if dialect.cte_materialized }}(
  select
    {{ codes }},
    count(*) as n,
    {{ "sum(w)" if weighted else "cast(count(*) as " ~ dialect.double ~ ")" }} as ws,
    {{ null_pattern(qi.codes) if qi.pairs else "0" }} as pat,
    row_number() over (order by {{ codes }}) - 1 as cell
  from {{ encoded }}
  group by {{ codes }}
),
matched_{{ qi.index }} as (
  select cell, n as own, n, ws
  from cells_{{ qi.index }}
{% for pair in qi.pairs %}
  union all
  select a.cell, 0 as own, b.n, b.ws
  from cells_{{ qi.index }} as a
  {{ joined(pair.keys) }} (
    select {% for k in pair.keys %}{{ k }}, {% endfor %}sum(n) as n, sum(ws) as ws
    from cells_{{ qi.index }}
    where pat = {{ pair.pb }}
{% if pair.keys %}
    group by {{ pair.keys | join(", ") }}
{% endif %}
  ) as b
  {{ on_keys(pair.keys) }}
  where a.pat = {{ pair.pa }}
{% endfor %}
){{ "," if sensitive or not last_qi }}
{% for s in sensitive %}
values_{{ qi.index }}_{{ s.index }} as {{ "materialized " if dialect.cte_materialized and qi.pairs }}(
  select
    {{ codes }},
    {{ s.code }} as s,
    count(*) as n,
    {{ null_pattern(qi.codes) if qi.pairs else "0" }} as pat,
    dense_rank() over (order by {{ codes }}) - 1 as cell
  from {{ encoded }}
  group by {{ codes }}, {{ s.code }}
),
smatched_{{ qi.index }}_{{ s.index }} as (
  select cell, s, n
  from values_{{ qi.index }}_{{ s.index }}
{% for pair in qi.pairs %}
  union all
  select a.cell, b.s, b.n
  from cells_{{ qi.index }} as a
  join (
    select {% for k in pair.keys %}{{ k }}, {% endfor %}s, sum(n) as n
    from values_{{ qi.index }}_{{ s.index }}
    where pat = {{ pair.pb }}
    group by {% for k in pair.keys %}{{ k }}, {% endfor %}s
  ) as b
  on {% for k in pair.keys %}a.{{ k }} = b.{{ k }} and {% endfor %}a.pat = {{ pair.pa }}
{% endfor %}
){{ "," if not loop.last or not last_qi }}
{% endfor %}
{% endfor %}
{% for qi in qis %}
select 0 as kind, {{ qi.index }} as qi, cell, cast(sum(own) as {{ dialect.bigint }}) as x, cast(sum(n) as {{ dialect.bigint }}) as y, cast(sum(ws) as {{ dialect.double }}) as z
from matched_{{ qi.index }}
group by cell
{% for s in sensitive %}
union all
select 1 as kind, {{ qi.index }} as qi, cell, cast({{ s.index }} as {{ dialect.bigint }}) as x, cast(s as {{ dialect.bigint }}) as y, cast(sum(n) as {{ dialect.double }}) as z
from smatched_{{ qi.index }}_{{ s.index }}
group by cell, s
{% endfor %}
{{ "union all" if not loop.last }}
{% endfor %}
