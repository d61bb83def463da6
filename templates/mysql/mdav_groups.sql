-- MariaDB names a derived VALUES table's columns after its first row and takes no column list
-- after the alias; a CTE's column list names them.
(with qar_v (qar__mid, qar__mg) as (values
{% for i, g in groups %}
  ({{ i }}, {{ g }}){{ "," if not loop.last }}
{% endfor %}
) select qar__mid, qar__mg from qar_v) as qar_m
