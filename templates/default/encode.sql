-- One row per source row, each quasi-identifier column replaced by an integer code.
-- NULL gets code -1, a value of its own (GROUP BY semantics); other values are numbered 0, 1, ...
-- Small integer keys make the many GROUP BYs of the scan cheap, whatever the column types.
-- With order_by (record-level commands), r numbers the records 0, 1, ... in key order; with
-- row_id instead, r is that expression (DuckDB's rowid: an id, not a position in key order).
{% from "default/_dictionary.sql" import dictionaries, coded_columns, dictionary_joins with context %}
with
{{ dictionaries(columns, relation) }}
select
{{ coded_columns(columns, order_by or (row_id is defined and row_id)) }}
{% if order_by %}
  row_number() over (order by {{ order_by | join(", ") }}) - 1 as r
{% elif row_id is defined and row_id %}
  {{ row_id }} as r
{% endif %}
from {{ relation }} as t
{{ dictionary_joins(columns) }}
