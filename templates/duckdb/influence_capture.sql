-- DuckDB only. Every class of the candidate QIs (those likely to carry weight in ∂T̂/∂θ), with its
-- size and its smallest record id r, kept in a session temp table: the audit's class-size
-- histograms and the singletons' records then come from this one pass, so the influence tally
-- does not group the table by these QIs a second time.
create or replace temp table {{ q(groups) }} as
{% for qi in qis %}
select {{ qi.index }} as qi, count(*) as size, min(r) as r
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
{{ "union all" if not loop.last }}
{% endfor %}
