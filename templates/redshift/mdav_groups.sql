-- Redshift has no VALUES list as a table (only in INSERT): the (row identity, group) pairs are a UNION ALL of one-row SELECTs.
(
{% for i, g in groups %}
  select {{ i }} as qar__mid, {{ g }} as qar__mg{{ " union all" if not loop.last }}
{% endfor %}
) as qar_m
