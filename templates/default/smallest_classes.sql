-- The value combinations of one quasi-identifier with the fewest records (the records most
-- exposed when k people reveal these columns): the values v0, v1, ..., then the class size n.
-- Ties in n go by the values, in the engine's sort order (NULL last on both DuckDB and PostgreSQL).
select
{% for col in columns %}
  {{ q(col) }} as v{{ loop.index0 }},
{% endfor %}
  count(*) as n
from {{ relation }} as t
group by
{% for col in columns %}
  {{ q(col) }}{{ "," if not loop.last }}
{% endfor %}
order by
  n{% for col in columns %}, v{{ loop.index0 }}{% endfor %}

limit {{ limit }}
