-- DuckDB only: a cube — the cells of a superset of some QIs' columns, each with its record count
-- n — in a session temp table (in memory; DuckDB read a materialized CTE of the same cells about
-- 2x slower). The QIs of the batch that follows are counted from it by summing n.
create or replace temp table {{ q(name) }} as
select {{ codes | join(", ") }}, count(*) as n
from {{ encoded }}
group by {{ codes | join(", ") }}
