-- SQLite names the columns of VALUES column1, column2 and takes no column list after an alias.
(select column1 as qar__mid, column2 as qar__mg from (values
{% for i, g in groups %}
  ({{ i }}, {{ g }}){{ "," if not loop.last }}
{% endfor %}
)) as qar_m
