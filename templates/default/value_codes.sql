-- One row per distinct non-NULL value of one column: the value and its code, numbered exactly
-- as encode.sql numbers it (0, 1, ... in the engine's value order), so codes read with
-- record_codes.sql can be mapped to values (entropy with a user-given value order).
select
  v,
  row_number() over (order by v) - 1 as code
from (
  select distinct {{ q(column) }} as v
  from {{ relation }}
  where {{ q(column) }} is not null
) s
order by code
