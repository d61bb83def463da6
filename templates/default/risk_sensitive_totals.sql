-- qar risk: the table's distribution of each sensitive column (index x, value code y, records
-- z), the reference distribution of t-closeness.
{% if encode_sql %}
with encoded as (
{{ encode_sql | indent(2, true) }}
)
{% endif %}
{% for s in sensitive %}
select cast({{ s.index }} as {{ dialect.bigint }}) as x, cast({{ s.code }} as {{ dialect.bigint }}) as y, count(*) as z
from {{ encoded }}
group by {{ s.code }}
{{ "union all" if not loop.last }}
{% endfor %}
