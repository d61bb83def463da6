-- DuckDB only. The (qi, r) pairs of weighted QIs the audit did not capture (influence_capture.sql):
-- record r is alone in its class of QI qi.
{% from "default/_singletons.sql" import singleton_pairs %}
insert into {{ q(pairs) }}
{{ singleton_pairs(qis, encoded) }}
