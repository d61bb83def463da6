{# Pearson's r: the engine's corr() where it has one; else (MariaDB) from the sums over the
   rows where both values are present. #}
{% macro pearson_r(x, y) -%}
{% if dialect.corr -%}
corr({{ x }}, {{ y }})
{%- else -%}
{%- set both = "(" ~ x ~ ") is not null and (" ~ y ~ ") is not null" -%}
{%- set n = "sum(case when " ~ both ~ " then 1 else 0 end)" -%}
{%- set sx = "sum(case when " ~ both ~ " then " ~ x ~ " end)" -%}
{%- set sy = "sum(case when " ~ both ~ " then " ~ y ~ " end)" -%}
(({{ n }} * sum(case when {{ both }} then {{ x }} * {{ y }} end) - {{ sx }} * {{ sy }})
    / nullif(sqrt(({{ n }} * sum(case when {{ both }} then {{ x }} * {{ x }} end) - {{ sx }} * {{ sx }})
      * ({{ n }} * sum(case when {{ both }} then {{ y }} * {{ y }} end) - {{ sy }} * {{ sy }})), 0))
{%- endif %}
{%- endmacro %}
-- One row: for every column of the information-loss report, its changed cells, the mean and
-- standard deviation of its original and released values, and the sum of |released − original|
-- (numeric columns); for every numeric pair, Pearson's r before and after. Original values are
-- the columns qar__o_N carried through the release, released ones qar__t_N.
select
  count(*) as qar_rows
{% for c in columns %}
  , sum(case when {{ c.changed }} then 1 else 0 end) as changed_{{ loop.index0 }}
{% if c.numeric_before %}
  , avg({{ c.o }}) as mean_o_{{ loop.index0 }}
  , stddev_samp({{ c.o }}) as sd_o_{{ loop.index0 }}
{% endif %}
{% if c.numeric_after %}
  , avg({{ c.t }}) as mean_t_{{ loop.index0 }}
  , stddev_samp({{ c.t }}) as sd_t_{{ loop.index0 }}
{% endif %}
{% if c.numeric_before and c.numeric_after %}
  , sum(abs({{ c.t }} - {{ c.o }})) as abs_{{ loop.index0 }}
{% endif %}
{% endfor %}
{% for p in pearson %}
  , {{ pearson_r(p.oa, p.ob) }} as r_o_{{ loop.index0 }}
  , {{ pearson_r(p.ta, p.tb) }} as r_t_{{ loop.index0 }}
{% endfor %}
from {{ relation }} as t
