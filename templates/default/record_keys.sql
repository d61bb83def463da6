-- The key values of the requested records r (their positions in key order), in key order.
select r, {% for k in key %}{{ q(k) }}{{ ", " if not loop.last }}{% endfor %}
from (
  select
    row_number() over (order by {% for k in key %}{{ q(k) }}{{ ", " if not loop.last }}{% endfor %}) - 1 as r,
    {% for k in key %}{{ q(k) }}{{ ", " if not loop.last }}{% endfor %}
  from {{ relation }} as t
) k
{% if wanted is not none %}
where r in ({{ wanted | join(", ") }})
{% endif %}
order by r
