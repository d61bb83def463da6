-- One row per (quasi-identifier, record) where the record is unique on that QI: the singleton
-- classes of each QI in the batch, with the record number r of their only member.
{% for qi in qis %}
select
  {{ qi.index }} as qi,
  min(r) as r
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
having count(*) = 1
{{ "union all" if not loop.last }}
{% endfor %}
