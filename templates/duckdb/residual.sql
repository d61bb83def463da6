-- DuckDB only: the residual of a subset (default/_classes.sql: residual_rows) in a session temp
-- table (in memory), made once for the QIs of the batch that follows and dropped by the next.
{% from "default/_classes.sql" import residual_rows %}
create or replace temp table {{ q(name) }} as
{{ residual_rows(encoded, codes, keep) }}
