-- BigQuery has no VALUES table constructor: the (row identity, group) pairs are an array of structs.
unnest([
{% for i, g in groups %}
  struct({{ i }} as qar__mid, {{ g }} as qar__mg){{ "," if not loop.last }}
{% endfor %}
]) as qar_m
