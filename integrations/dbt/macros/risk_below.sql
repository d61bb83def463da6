{#- The generic test qar.risk_below: fails (one row) when the QaR risk T of the model is above
    threshold, when it has no risk at all (no theta exceeds u: a table of near-keys can do that;
    never a silent pass), or, with min_exceedances, when the fit rests on fewer exceedances of u
    (as qar scan's min_exceedances). In schema.yml:

      models:
        - name: people
          tests:
            - qar.risk_below:
                threshold: 0.5
                p: 3                      # optional, as alpha (0.01) and pi_u (0.05)
                theta: unique             # optional: distinct (H/L, the default) or unique (S/L)
                columns: [age, sex, zip]  # optional: default, the columns with meta {qar: quasi_identifier}
                min_exceedances: 3        # optional: fail a fit on fewer exceedances of u
                config: {severity: warn}  # dbt's own severity / warn_if / error_if work as usual
-#}

{% test risk_below(model, threshold, columns=none, p=3, alpha=0.01, pi_u=0.05, min_exceedances=none, theta='distinct') %}
  {{ return(adapter.dispatch('test_risk_below', 'qar')(model, threshold, columns, p, alpha, pi_u, min_exceedances, theta)) }}
{% endtest %}

{#- Below this many exceedances the GPD fit is fragile (qar_sql.stats.evt.SMALL_TAIL): a failing
    row's message says so, as qar's own output does. -#}
{% macro small_tail() -%}
  {{ return(10) }}
{%- endmacro %}

{% macro default__test_risk_below(model, threshold, columns, p, alpha, pi_u, min_exceedances=none, theta='distinct') -%}
{%- if not execute -%}
{#- Parsing: the graph (and so the columns' meta) is not there yet; dbt only records the refs. -#}
select 1 as risk
{%- else -%}
{%- do qar.check_not_text('qar.risk_below', 'threshold', threshold) -%}
{%- if threshold is not number or threshold is boolean or threshold != threshold or threshold <= 0 or threshold > 1 -%}
  {{ exceptions.raise_compiler_error("qar.risk_below: threshold = " ~ threshold ~ " is not a risk; use a number in (0, 1], such as 0.5") }}
{%- endif -%}
{%- if min_exceedances is not none -%}
  {%- do qar.check_not_text('qar.risk_below', 'min_exceedances', min_exceedances) -%}
  {%- if min_exceedances is not number or min_exceedances is boolean or min_exceedances != min_exceedances | int or min_exceedances < 1 -%}
    {{ exceptions.raise_compiler_error("qar.risk_below: min_exceedances = " ~ min_exceedances ~ " is not a number of exceedances; use a whole number of at least 1, such as 3") }}
  {%- endif -%}
{%- endif -%}
{%- set cols = columns if columns is not none else qar.tagged_columns(model) -%}
{%- set note = " (p = " ~ p ~ ", alpha = " ~ alpha ~ ", pi_u = " ~ pi_u ~ ", " ~ (cols | length) ~ " columns)" -%}
{%- set fragile = "; the tail has fewer than " ~ qar.small_tail() ~ " exceedances of u, so the GPD fit is fragile: read T with caution (a larger pi_u or more quasi-identifiers give a larger tail)" -%}
{%- set minimum = min_exceedances | int if min_exceedances is not none else none -%}
select
  r.risk as risk,
  {{ threshold }} as threshold,
  r.u as u,
  r.exceedances as exceedances,
  r.exceedances as n_exceedances,
  {{ minimum if minimum is not none else "cast(null as integer)" }} as min_exceedances,
  case
    when r.risk is null then {{ qar.string_literal("no QaR risk: no theta exceeds u, so there is no tail to fit" ~ note ~ "; try a larger pi_u or another p") }}
{%- if minimum is not none %}
    when r.exceedances < {{ minimum }} then {{ qar.string_literal("QaR risk T = ") }} || cast(r.risk as {{ dbt.type_string() }}) || {{ qar.string_literal(" rests on ") }} || cast(r.exceedances as {{ dbt.type_string() }}) || {{ qar.string_literal(" exceedances of u, fewer than min_exceedances = " ~ minimum ~ note ~ ", so its tail fit is too thin to judge by; audit more quasi-identifier columns or raise pi_u") }}
{%- endif %}
    else {{ qar.string_literal("QaR risk T = ") }} || cast(r.risk as {{ dbt.type_string() }}) || {{ qar.string_literal(" is above the threshold " ~ threshold ~ note) }}
  end
  || case when r.risk is not null and r.exceedances < {{ qar.small_tail() }} then {{ qar.string_literal(fragile) }} else '' end
  as message
from (
{{ qar.risk(model, cols, p, alpha, pi_u, theta) }}
) as r
where r.risk is null or r.risk > {{ threshold }}
{%- if minimum is not none %} or r.exceedances < {{ minimum }}{% endif %}
{%- endif -%}
{%- endmacro %}

{#- What a column's meta qar may say. quasi_identifier: audit it; identifier (a direct
    identifier), sensitive (a sensitive attribute) and ignore: leave it out, saying why. qar scan
    --dbt-project accepts the same (qar_sql/compliance/dbt.py, META_VALUES). -#}
{% macro meta_values() -%}
  {{ return(['quasi_identifier', 'identifier', 'sensitive', 'ignore']) }}
{%- endmacro %}

{#- The columns of the tested model whose meta says qar: quasi_identifier, in the YAML's order.
    Any other value is an error naming it (a misspelt tag never drops a column silently). -#}
{% macro tagged_columns(model) -%}
  {%- set ident = model.identifier if model.identifier is defined else none -%}
  {%- if ident is none -%}
    {{ exceptions.raise_compiler_error("qar.risk_below: cannot find the model of " ~ model ~ " in the graph (a where: config?); name its columns with columns: [...]") }}
  {%- endif -%}
  {%- set nodes = [] -%}
  {%- for node in graph.nodes.values() -%}
    {%- if node.resource_type in ['model', 'seed', 'snapshot']
        and (node.alias or node.name) | lower == ident | lower
        and (node.schema or '') | lower == (model.schema or '') | lower -%}
      {%- do nodes.append(node) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if nodes | length != 1 -%}
    {{ exceptions.raise_compiler_error("qar.risk_below: cannot find the model of " ~ model ~ " in the graph; name its columns with columns: [...]") }}
  {%- endif -%}
  {%- set node = nodes[0] -%}
  {%- set out = [] -%}
  {%- for key, col in node.columns.items() -%}
    {%- set meta = {} -%}
    {%- do meta.update(col.meta or {}) -%}
    {%- do meta.update((col.config or {}).get('meta') or {}) -%}
    {%- set tag = meta.get('qar') -%}
    {%- set tags = [] if tag is none else (tag if (tag is iterable and tag is not string and tag is not mapping) else [tag]) -%}
    {%- for t in tags -%}
      {%- if t not in qar.meta_values() -%}
        {{ exceptions.raise_compiler_error("qar.risk_below: column '" ~ (col.name or key) ~ "' of model '" ~ node.name ~ "' has meta qar: '" ~ t ~ "', which qar does not know; use one of " ~ (qar.meta_values() | join(', '))) }}
      {%- endif -%}
    {%- endfor -%}
    {%- if 'quasi_identifier' in tags -%}
      {%- set name = col.name or key -%}
      {%- if name | length >= 2 and name[0] == '"' and name[-1] == '"' -%}
        {%- set name = name[1:-1] | replace('""', '"') -%}
      {%- endif -%}
      {%- do out.append(name) -%}
    {%- endif -%}
  {%- endfor -%}
  {%- if out | length == 0 -%}
    {{ exceptions.raise_compiler_error("qar.risk_below: model '" ~ node.name ~ "' has no column with meta {qar: quasi_identifier}; tag its quasi-identifier columns in its YAML or name them with columns: [...]") }}
  {%- endif -%}
  {{ return(out) }}
{%- endmacro %}
