-- Exact DT for a few candidate records (influence refinement): on which of the top-M QIs by θ is
-- each candidate alone in its class? Returns (qi, r) for the candidates {{ candidates | join(", ") }}.
{% from "default/_singletons.sql" import singleton_pairs %}
{% from "default/_classes.sql" import encoded_cte %}
{% if encode_sql %}
with {{ encoded_cte(encode_sql, dialect) }}
{% endif %}
select qi, r
from (
{{ singleton_pairs(qis, encoded) }}
) singles
where r in ({{ candidates | join(", ") }})
