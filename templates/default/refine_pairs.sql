-- Exact DT for a few candidate records (influence refinement): on which of the top-M QIs by θ is
-- each candidate alone in its class? Returns (qi, r) for the candidates {{ candidates | join(", ") }}.
{% from "default/_singletons.sql" import singleton_pairs %}
{% if encode_sql %}
with encoded as {{ "materialized " if dialect.cte_materialized }}(
{{ encode_sql | indent(2, true) }}
)
{% endif %}
select qi, r
from (
{{ singleton_pairs(qis, encoded) }}
) singles
where r in ({{ candidates | join(", ") }})
