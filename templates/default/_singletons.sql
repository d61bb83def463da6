{#- The (qi, r) pairs of the given QIs: record r is alone in its class of QI qi. Imported by the
    influence, capture and refinement templates. -#}
{% macro singleton_pairs(qis, encoded) %}
{% for qi in qis %}
select {{ qi.index }} as qi, min(r) as r
from {{ encoded }}
group by {{ qi.codes | join(", ") }}
having count(*) = 1
{{ "union all" if not loop.last }}
{% endfor %}
{% endmacro %}
