-- One row per record, in key order: r (0, 1, ... in key order), then each named numeric column
-- as a double (NULL stays NULL). Read by the PLS predictor, which regresses on the values.
select
  r{% for col in columns %}, v{{ loop.index0 }}{% endfor %}

from (
  select
    row_number() over (order by {{ order_by | join(", ") }}) - 1 as r
{% for col in columns %}
    , cast(t.{{ q(col) }} as {{ dialect.double }}) as v{{ loop.index0 }}
{% endfor %}
  from {{ relation }} as t
) v
order by r
