-- The treated release: every source row with the treatments applied one step at a time.
-- qar__single_N marks rows that are singletons on local quasi-identifier N in the source (NULL a
-- value of its own, as in GROUP BY); qar__modified marks rows some treatment changed; qar__id is
-- the row identity the perturbative treatments draw from; qar__o_N keeps an original value for
-- the information-loss report (or a later treatment's local rows). Read-only: the source is
-- only selected from.
with qar_step0 as (
  select
    t.*,
{% if identity %}
    {{ identity }} as qar__id,
{% endif %}
{% for qi in local_qis %}
    (count(*) over (partition by {% for c in qi %}t.{{ q(c) }}{{ ", " if not loop.last }}{% endfor %}) = 1) as qar__single_{{ loop.index0 }},
{% endfor %}
{% for c in originals %}
    t.{{ q(c) }} as qar__o_{{ loop.index0 }},
{% endfor %}
    false as qar__modified
  from {{ relation }} as t
{% if not_null %}
  where {% for c in not_null %}t.{{ q(c) }} is not null{{ " and " if not loop.last }}{% endfor +%}
{% endif %}
){{ "," if steps }}
{% for s in steps %}
-- step {{ loop.index }}: {{ s.name }}
{% if s.ctes %}
{{ s.ctes }},
{% else %}
qar_new{{ loop.index }} as (
  select
    t.*,
    {{ s.expr }} as qar__new_0{{ "," if s.keep }}
{% if s.keep %}
    ({{ s.keep }}) as qar__keep
{% endif %}
  from qar_step{{ loop.index0 }} as t
{% if s.join %}
  {{ s.join }}
{% endif %}
),
{% endif %}
{% set changed = s.columns or [s.column] %}
qar_step{{ loop.index }} as (
  select
{% for c in columns %}
    {{ "t." ~ s.news[changed.index(c)] if c in changed else "t." ~ q(c) }} as {{ q(c) }},
{% endfor %}
{% for x in internal %}
    t.{{ x }},
{% endfor %}
    (t.qar__modified or {{ s.changed }}) as qar__modified
  from qar_new{{ loop.index }} as t
{% if s.keep %}{# record suppression: the rows failing the step's keep condition leave the release #}
  where t.qar__keep
{% endif %}
){{ "," if not loop.last }}
{% endfor %}
select
{% for c in columns %}
  t.{{ q(c) }}{{ "," if not loop.last or modified or originals or keep_id }}
{% endfor %}
{% for c in originals %}
  t.qar__o_{{ loop.index0 }}{{ "," if not loop.last or modified or keep_id }}
{% endfor %}
{% if keep_id %}
  t.qar__id{{ "," if modified }}
{% endif %}
{% if modified %}
  t.qar__modified
{% endif %}
from qar_step{{ steps | length }} as t
