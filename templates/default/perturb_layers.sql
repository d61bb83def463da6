-- CTEs of one perturbative step, one layer at a time: every layer returns each row of the layer
-- before with the carried columns and its own new ones (draw lanes, ranks, group values). A
-- dialect's fence (PostgreSQL: offset 0) keeps a layer from being inlined into the next, which
-- would compute a column once per reference. This is a fragment of a WITH list.
{% for layer in layers %}
{{ layer.name }} as (
  select
{% for c in layer.carry %}
    t.{{ c }},
{% endfor %}
{% for alias, expr in layer.cols %}
    {{ expr }} as {{ alias }}{{ "," if not loop.last }}
{% endfor %}
  from {{ layer.source }} as t
{% if layer.join %}
  {{ layer.join }}
{% endif %}
{% if fence %}
  {{ fence }}
{% endif %}
){{ "," if not loop.last }}
{% endfor %}
