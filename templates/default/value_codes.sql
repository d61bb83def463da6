-- One row per distinct non-NULL value of one column: the value and its code, numbered exactly
-- as encode.sql numbers it (0, 1, ... in the engine's value order), so codes read with
-- record_codes.sql can be mapped to values (entropy with a user-given value order).
{% from "default/_dictionary.sql" import dictionary with context %}
{{ dictionary(column, relation, "s") }}
order by code
