-- SUDA (qar records --by suda, qar risk --per-record): for every column set of the batch, the
-- records unique on it with no NULL in it (SUDA2 never puts a missing value in an MSU), as
-- (record r, word w, bits): QI j is bit j mod 62 of word j div 62, summed per (r, w).
-- missing = wildcard: a record is unique on a set only when, besides being alone in its cell,
-- no record with NULLs there matches it (for each NULL pattern pb present, no pb cell agrees
-- with it on the columns non-NULL in pb).
{% from "default/_risk.sql" import null_pattern with context %}
{% from "default/_classes.sql" import with_encoded %}
{{ with_encoded(encode_sql, dialect) }}
{% for qi in qis %}
{% set codes = qi.codes | join(", ") %}
{% if qi.patterns %}
cells_{{ qi.index }} as {{ "materialized " if dialect.cte_materialized }}(
  select {{ codes }}, count(*) as n, min(r) as r, {{ null_pattern(qi.codes) }} as pat
  from {{ encoded }}
  group by {{ codes }}
),
{% endif %}
{% endfor %}
flags as (
{% for qi in qis %}
{% set codes = qi.codes | join(", ") %}
{% if qi.patterns %}
  select {{ qi.index }} as qi, {{ qi.word }} as w, cast({{ qi.bit }} as {{ dialect.bigint }}) as bit, a.r
  from cells_{{ qi.index }} as a
  where a.n = 1 and a.pat = 0
{% for pb in qi.patterns %}
    and not exists (
      select 1 from cells_{{ qi.index }} as b
      where b.pat = {{ pb.pat }}{% for k in pb.on %} and b.{{ k }} = a.{{ k }}{% endfor %}

    )
{% endfor %}
{% else %}
  select {{ qi.index }} as qi, {{ qi.word }} as w, cast({{ qi.bit }} as {{ dialect.bigint }}) as bit, min(r) as r
  from {{ encoded }}
  group by {{ codes }}
  having count(*) = 1{% for c in qi.codes %} and min({{ c }}) >= 0{% endfor %}

{% endif %}
{{ "  union all" if not loop.last }}
{% endfor %}
)
select r, w, cast(sum(bit) as {{ dialect.bigint }}) as bits
from flags
group by r, w
