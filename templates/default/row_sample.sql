-- The QI columns of the first {{ n }} rows in the order of a hash of each row (its values and
-- which of its identical copies it is): a subsample without replacement, the same on every run,
-- and nested (the first n of one order hold the first m < n). The copies of one row are alike,
-- so ordering them by their own values only satisfies engines (Spark) that want an order.
(select
{% for col in columns %}
  {{ "" if loop.first else ", " }}s.{{ q(col) }}
{% endfor %}
from (
  select
{% for col in columns %}
    d.{{ q(col) }},
{% endfor %}
    row_number() over (
      order by {{ row_hash }}
    ) as qar_sample_rank
  from (
    select
{% for col in columns %}
      t.{{ q(col) }},
{% endfor %}
      row_number() over (partition by {% for col in columns %}{{ "" if loop.first else ", " }}t.{{ q(col) }}{% endfor %} order by {% for col in columns %}{{ "" if loop.first else ", " }}t.{{ q(col) }}{% endfor %}) as qar_copy
    from {{ relation }} as t
  ) as d
) as s
where s.qar_sample_rank <= {{ n }})
