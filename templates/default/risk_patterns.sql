-- qar risk with missing = wildcard: the NULL patterns over the quasi-identifier columns (bit i:
-- column i is NULL) and how many records have each. A handful of rows: it decides which pairs
-- of patterns risk_cells.sql joins for every QI.
{% from "default/_risk.sql" import null_pattern with context %}
{% if encode_sql %}
with encoded as (
{{ encode_sql | indent(2, true) }}
)
{% endif %}
select pat, count(*) as records
from (
  select {{ null_pattern(codes) }} as pat
  from {{ encoded }}
) p
group by pat
