-- Spark: one GROUP BY GROUPING SETS per batch instead of a UNION ALL of one GROUP BY per QI, which Spark plans and shuffles QI by QI (2.2x slower on a 14-QI batch); grouping_id names each row's QI.
-- One row per (quasi-identifier, class size): how many equivalence classes of that size it has.
-- grouping_id(c...) has bit (k - 1 - i) set where the i-th of the batch's k columns is not
-- grouped, so each QI's set of columns gives one id. Spark's ids are 64-bit: a batch over more
-- than 62 columns (or with cubes, which Spark's dialect does not plan) is counted as elsewhere.
{% set ns = namespace(cols=[]) %}
{% for qi in qis %}
{% for c in qi.codes %}
{% if c not in ns.cols %}
{% set ns.cols = ns.cols + [c] %}
{% endif %}
{% endfor %}
{% endfor %}
{% if cubes or ns.cols | length > 62 or qis | length < 2 %}
{% include "default/class_sizes.sql" %}
{% else %}
{% from "default/_classes.sql" import with_encoded %}
{{ with_encoded(encode_sql, dialect) }}
qar_sets as (
  select grouping_id({{ ns.cols | join(", ") }}) as gid, count(*) as size
  from {{ encoded }}
  group by grouping sets (
{% for qi in qis %}
    ({{ qi.codes | join(", ") }}){{ "," if not loop.last }}
{% endfor %}
  )
)
select
  case gid
{% for qi in qis %}
{% set ns.mask = 0 %}
{% for c in ns.cols %}
{% if c not in qi.codes %}
{% set ns.mask = ns.mask + 2 ** (ns.cols | length - 1 - loop.index0) %}
{% endif %}
{% endfor %}
    when {{ ns.mask }} then {{ qi.index }}
{% endfor %}
  end as qi,
  size,
  count(*) as classes
from qar_sets
group by gid, size
{% endif %}
