-- One row per pair of columns: from its two-way table before and after the treatment (numeric
-- columns cut at the original's deciles, NULL a category of its own) the sums that give
-- Cramér's V — Σ n_ab² / (n_a·n_b), the numbers of row and column categories — and the sum of
-- |n_ab(original) − n_ab(release)| over the cells of either table (twice the total variation
-- distance times the row count).
with qar_p as {{ "materialized " if dialect.cte_materialized }}(
  select
{% for c in columns %}
    {{ c.ob }} as qar__a{{ loop.index0 }},
    {{ c.tb }} as qar__b{{ loop.index0 }}{{ "," if not loop.last }}
{% endfor %}
  from {{ relation }} as t
){% for p in pairs %},
qar_o{{ loop.index0 }} as (
  select qar__a{{ p.i }} as x, qar__a{{ p.j }} as y, count(*) as n
  from qar_p
  group by qar__a{{ p.i }}, qar__a{{ p.j }}
),
qar_t{{ loop.index0 }} as (
  select qar__b{{ p.i }} as x, qar__b{{ p.j }} as y, count(*) as n
  from qar_p
  group by qar__b{{ p.i }}, qar__b{{ p.j }}
)
{%- endfor %}

{% for p in pairs %}
{% set k = loop.index0 %}
select
  {{ k }} as pair,
{% for side in ("o", "t") %}
  (select sum(cast(c.n as {{ double }}) * c.n / (cast(c.nx as {{ double }}) * c.ny))
   from (select n, sum(n) over (partition by x) as nx, sum(n) over (partition by y) as ny from qar_{{ side }}{{ k }}) as c) as chi_{{ side }},
  (select count(distinct x) + max(case when x is null then 1 else 0 end) from qar_{{ side }}{{ k }}) as rows_{{ side }},
  (select count(distinct y) + max(case when y is null then 1 else 0 end) from qar_{{ side }}{{ k }}) as cols_{{ side }},
{% endfor %}
  (select sum(abs(u.no - u.nt)) from (
     select x, y, sum(no) as no, sum(nt) as nt from (
       select x, y, n as no, 0 as nt from qar_o{{ k }}
       union all
       select x, y, 0 as no, n as nt from qar_t{{ k }}
     ) as v
     group by x, y
   ) as u) as diff
{{ "union all" if not loop.last }}
{% endfor %}
