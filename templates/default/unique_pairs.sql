-- One row per (quasi-identifier, record) where the record is unique on that QI: the singleton
-- classes of each QI in the batch, with the record number r of their only member. w and bit
-- place the QI in 62-bit words of flags (QI j is bit j mod 62 of word j div 62).
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  min(r) as r,
  {{ qi.word }} as w,
  cast({{ qi.bit }} as bigint) as bit
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
having count(*) = 1
{{ "union all" if not loop.last }}
{% endfor %}
