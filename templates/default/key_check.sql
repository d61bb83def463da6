-- One row: how many records have a NULL in the key, and how many records repeat a key value
-- (records minus distinct keys: one count(distinct) is cheaper than grouping every key).
select
  coalesce(sum(case when {% for k in key %}{{ q(k) }} is null{{ " or " if not loop.last }}{% endfor %} then 1 else 0 end), 0) as null_keys,
{% if key | length == 1 %}
  count({{ q(key[0]) }}) - count(distinct {{ q(key[0]) }}) as duplicate_keys
{% else %}
  count(*) - (select count(*) from (
     select distinct {% for k in key %}{{ q(k) }}{{ ", " if not loop.last }}{% endfor %}
     from {{ relation }} as t
   ) d) as duplicate_keys
{% endif %}
from {{ relation }} as t
