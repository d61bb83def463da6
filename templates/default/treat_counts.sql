-- One row for a treated release: its rows, distinct values (DV) and singletons on the QID,
-- its smallest class, its modified rows (MR), and its true singletons: singletons whose released
-- QID values are all their original ones (the matches an intruder would get right). Classes
-- group NULL as a value of its own.
select
  coalesce(sum(n), 0) as row_count,
  count(*) as classes,
  coalesce(sum(case when n = 1 then 1 else 0 end), 0) as singletons,
  coalesce(min(n), 0) as min_class,
  coalesce(sum(m), 0) as modified,
  coalesce(sum(case when n = 1 and o = 1 then 1 else 0 end), 0) as true_singletons
from (
  select
    count(*) as n,
    sum(case when t.qar__modified then 1 else 0 end) as m,
    sum(case when {{ same }} then 1 else 0 end) as o
  from (
{{ treated | indent(4, true) }}
  ) as t
  group by {% for c in qid %}t.{{ q(c) }}{{ ", " if not loop.last }}{% endfor +%}
) as g
