-- qar risk --weight: one row, how many weights are NULL, how many are not finite (NaN or
-- infinity: w - w is then NaN, never 0), how many are not positive, and the smallest weight (to
-- name the bad value in the message).
select
  coalesce(sum(case when {{ q(weight) }} is null then 1 else 0 end), 0) as null_weights,
  coalesce(sum(case when {{ q(weight) }} - {{ q(weight) }} <> 0 then 1 else 0 end), 0) as not_finite,
  coalesce(sum(case when {{ q(weight) }} <= 0 then 1 else 0 end), 0) as bad_weights,
  min({{ q(weight) }}) as smallest
from {{ relation }} as t
