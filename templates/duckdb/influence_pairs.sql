-- DuckDB only. The (qi, r) pairs of weighted QIs the audit did not capture (influence_capture.sql):
-- record r is alone in its class of QI qi.
insert into {{ q(pairs) }}
{% for qi in qis %}
select {{ qi.index }} as qi, min(r) as r
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
having count(*) = 1
{{ "union all" if not loop.last }}
{% endfor %}
