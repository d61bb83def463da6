-- Uniqueness patterns: the set of QIs on which a record is unique, deduplicated. Two kinds of rows:
--   kind 0: a = pattern id, b = number of records with the pattern, pattern = its QI indices;
--   kind 1: a = record r, b = its pattern id (only records unique on at least one QI).
-- Records unique on no QI do not appear: they share the empty pattern.
with
{% if encode_sql %}
encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
),
{% endif %}
pairs as (
{{ pairs_sql | indent(2, true) }}
),
records as (
  select
    r,
    array_agg(qi order by qi) as pattern
  from pairs
  group by r
),
patterns as (
  select
    pattern,
    count(*) as n,
    row_number() over (order by min(r)) as pid
  from records
  group by pattern
)
select 0 as kind, pid as a, n as b, pattern
from patterns
union all
select 1 as kind, records.r as a, patterns.pid as b, null as pattern
from records
join patterns
  on records.pattern = patterns.pattern
