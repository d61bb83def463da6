{#- Macros shared by the qar risk templates. Import "with context" (uses q).
    null_pattern: the NULL pattern of a record or cell over the given code columns, a bit mask
    (bit i set when the i-th column is NULL, coded -1). -#}
{% macro null_pattern(codes) %}
({% for c in codes %}case when {{ c }} = -1 then {{ 2 ** loop.index0 }} else 0 end{{ " + " if not loop.last }}{% endfor %})
{%- endmacro %}
{#- joined(a, b, keys): the join of a and b on equal keys, a cross join when there are none. -#}
{% macro joined(keys) %}
{% if keys %}
join
{%- else %}
cross join
{%- endif %}
{%- endmacro %}
{% macro on_keys(keys) %}
{% if keys %}
on {% for k in keys %}a.{{ k }} = b.{{ k }}{{ " and " if not loop.last }}{% endfor %}
{% endif %}
{%- endmacro %}
