-- ClickHouse's VALUES is a table function that takes the structure first.
values('qar__mid Int64, qar__mg Int64',
{% for i, g in groups %}
  ({{ i }}, {{ g }}){{ "," if not loop.last }}
{% endfor %}
) as qar_m
