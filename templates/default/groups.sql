-- Every class of each QI in the batch: its size and its smallest record r (its only member when
-- size = 1), with the QI's flag position for record-level tallies: QI j is bit j mod 62 of the
-- 62-bit word j div 62 (62 keeps sums of distinct powers of two inside a signed bigint).
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  {{ qi.word }} as w,
  cast({{ qi.bit }} as {{ dialect.bigint }}) as bit,
  count(*) as size,
  min(r) as r
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
{{ "union all" if not loop.last }}
{% endfor %}
