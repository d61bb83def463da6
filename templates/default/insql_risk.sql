{#- args: relation, qis, alpha, pi_u, double, theta -#}
-- One row: the QaR risk T(p, alpha) of the relation over its quasi-identifiers (QIs), computed
-- entirely in this statement (METHOD.md section 2), as qar_sql.stats.evt.qar_risk computes it:
--   rows         L, the records;                     n_qi  N_p, the QIs;
--   u            the Hyndman-Fan type-8 (1 - pi_u) quantile of theta = H / L, each theta first
--                clipped to [0.5/L, 1 - 0.5/L] (a key, theta = 1, gets a finite logit);
--   exceedances  n, the theta strictly above u;
--   xi, beta     the PWM fit of a Generalised Pareto Distribution to l = logit theta - logit u
--                over the exceedances (plotting positions (k - 0.35)/n, as evir and fExtremes);
--   risk         expit(logit u + beta * ((alpha/pi_u)^(-xi) - 1) / xi).
-- No exceedance (every theta equal, or the largest tied with u): xi, beta and risk are NULL,
-- never a made-up number. theta = 'unique' fits the same tail to S / L, the share of records
-- unique on each QI (a QI that singles out no one at 0.5/L, the clip's floor). The same SQL as the dbt macro qar.risk (integrations/dbt, generated
-- from this file by scripts/make_dbt_macros.py).
{# The type-8 quantile sits at the 0-based virtual index v of the N_p sorted theta, written as
    evt._type8_index writes it so that both round alike; u = lerp(theta_(j), theta_(j+1), g) in
    numpy's form (from the nearer end). The caller refuses v >= N_p - 1 (no tail is possible). #}
{% set n_qi = qis | length %}
{% set q = 1.0 - pi_u %}
{% set third = 1.0 / 3.0 %}
{% set v = n_qi * q + (third + q * (1.0 - third - third)) - 1.0 %}
{% set j = (v | int) if v >= 0 else 0 %}
{% set g = (v - j) if v >= 0 else 0.0 %}
with
counts as (
{% include "default/_insql_counts.sql" %}
),
n_rows as (
  select count(*) as l, cast(count(*) as {{ double }}) as m
  from {{ relation }}
),
clipped as (
  select
    least(
      greatest(cast({{ "c.s" if theta == "unique" else "c.h" }} as {{ double }}) / nullif(n.m, 0), cast('0.5' as {{ double }}) / nullif(n.m, 0)),
      1 - cast('0.5' as {{ double }}) / nullif(n.m, 0)
    ) as theta
  from counts as c
  cross join n_rows as n
),
ordered as (
  select theta, row_number() over (order by theta) - 1 as k
  from clipped
),
order_stats as (
  select
    max(case when k = {{ j }} then theta end) as lo,
    max(case when k = {{ j + 1 }} then theta end) as hi
  from ordered
),
threshold as (
  select
{% if g >= 0.5 %}
    hi - (hi - lo) * cast('{{ 1.0 - g }}' as {{ double }}) as u
{% else %}
    lo + (hi - lo) * cast('{{ g }}' as {{ double }}) as u
{% endif %}
  from order_stats
),
excess as (
  select
    ln(c.theta / (1 - c.theta)) - ln(t.u / (1 - t.u)) as x,
    cast(row_number() over (order by c.theta) as {{ double }}) as k,
    cast(count(*) over () as {{ double }}) as n
  from clipped as c
  cross join threshold as t
  where c.theta > t.u
),
moments as (
  select
    count(*) as n,
    sum(x) / nullif(cast(count(*) as {{ double }}), 0) as a0,
    sum((1 - (k - cast('0.35' as {{ double }})) / n) * x) / nullif(cast(count(*) as {{ double }}), 0) as a1
  from excess
),
fit as (
  select
    n,
    2 - a0 / nullif(a0 - 2 * a1, 0) as xi,
    2 * a0 * a1 / nullif(a0 - 2 * a1, 0) as beta,
    ln(cast('{{ pi_u }}' as {{ double }}) / cast('{{ alpha }}' as {{ double }})) as ell
  from moments
),
tail as (
{# c(xi) = ((alpha/pi_u)^(-xi) - 1)/xi = expm1(z)/xi, z = xi * ell. SQL has no expm1 and exp(z) - 1
    loses digits for small z: for |z| < 0.01 the series ell * expm1(z)/z = ell * (1 + z/2 + z^2/6
    + ... + z^6/5040), whose next term is below 3e-19 of it (and exactly ell at xi = 0). #}
  select
    f.n,
    f.xi,
    f.beta,
    ln(t.u / (1 - t.u)) + f.beta * (
      case
        when abs(f.xi * f.ell) < 0.01 then
          f.ell * (1 + f.xi * f.ell / 2 * (1 + f.xi * f.ell / 3 * (1 + f.xi * f.ell / 4 * (1 + f.xi * f.ell / 5 * (1 + f.xi * f.ell / 6 * (1 + f.xi * f.ell / 7))))))
        else (exp(f.xi * f.ell) - 1) / f.xi
      end
    ) as y
  from fit as f
  cross join threshold as t
)
select
  n.l as {{ adapter.quote("rows") }},
  {{ n_qi }} as n_qi,
  t.u as u,
  tl.xi as xi,
  tl.beta as beta,
  tl.n as exceedances,
{# expit y = 1/(1 + e^(-y)) written with e^(-|y|), as evt._expit; |y| is capped at 700 only so
    that PostgreSQL's exp cannot underflow (an error there), where the result is 0 or 1 anyway;
    least() skips NULLs, hence the first branch. #}
  case
    when tl.y is null then null
    when tl.y >= 0 then 1 / (1 + exp(-least(abs(tl.y), 700)))
    else exp(-least(abs(tl.y), 700)) / (1 + exp(-least(abs(tl.y), 700)))
  end as risk
from n_rows as n
cross join threshold as t
cross join tail as tl
