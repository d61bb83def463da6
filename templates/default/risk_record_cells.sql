-- qar risk, per record: its position r (file or key order) and its cell on the quasi-identifier,
-- numbered as risk_cells.sql numbers cells (dense_rank over the codes = row_number over the
-- distinct codes). L rows of two integers, read only for --per-record.
{% if encode_sql %}
with encoded as (
{{ encode_sql | indent(2, true) }}
)
{% endif %}
select
  r,
  dense_rank() over (order by {{ codes | join(", ") }}) - 1 as cell
from {{ encoded }}
order by r
