{#- The public macros: qar.risk (one row: the QaR risk of a relation) and qar.qi_theta (one row
    per quasi-identifier). Each dispatches (default__ first, as dbt-utils does); the SQL itself is
    generated from qar-sql's templates (macros/insql.sql), so the package and the qar command
    compute the same numbers. -#}

{#- theta: 'distinct' (theta = H/L, the paper's) or 'unique' (S/L, the share of records unique on
    the QI, fitted by the same tail), as qar audit --theta. -#}
{% macro risk(relation, columns, p=3, alpha=0.01, pi_u=0.05, theta='distinct') -%}
  {{ return(adapter.dispatch('risk', 'qar')(relation, columns, p, alpha, pi_u, theta)) }}
{%- endmacro %}

{% macro default__risk(relation, columns, p, alpha, pi_u, theta='distinct') -%}
  {%- do qar.check_parameters(p, alpha, pi_u) -%}
  {%- if theta not in ['distinct', 'unique'] -%}
    {{ exceptions.raise_compiler_error("qar: theta = " ~ theta ~ " is unknown; use 'distinct' or 'unique'") }}
  {%- endif -%}
  {%- do qar.check_columns_in('qar', relation, columns) -%}
  {%- set qis = qar.quasi_identifiers(columns, p) -%}
  {%- do qar.check_n_qi(qis | length, pi_u | float) -%}
  {{ return(qar.insql_risk(relation, qis, alpha | float, pi_u | float, qar.double_type(), theta)) }}
{%- endmacro %}

{% macro qi_theta(relation, columns, p=3) -%}
  {{ return(adapter.dispatch('qi_theta', 'qar')(relation, columns, p)) }}
{%- endmacro %}

{% macro default__qi_theta(relation, columns, p) -%}
  {%- do qar.check_parameters(p, 0.01, 0.05) -%}
  {%- do qar.check_columns_in('qar', relation, columns) -%}
  {{ return(qar.insql_qi_theta(relation, qar.quasi_identifiers(columns, p), qar.double_type())) }}
{%- endmacro %}

{#- The quasi-identifiers of size p over the columns, as the templates take them: position (the
    itertools.combinations order, qar's QI index), exprs (quoted columns), label (a literal). -#}
{% macro quasi_identifiers(columns, p) -%}
  {%- if columns is string or columns is mapping or columns is not iterable or columns | length == 0 -%}
    {{ exceptions.raise_compiler_error("qar: columns = " ~ columns ~ " is not a list of column names; pass at least p columns, e.g. columns=['age', 'sex', 'zip']") }}
  {%- endif -%}
  {%- set seen = [] -%}
  {%- for c in columns -%}
    {%- if c is not string or c == '' -%}
      {{ exceptions.raise_compiler_error("qar: column " ~ c ~ " is not a column name; name columns as text") }}
    {%- endif -%}
    {%- if c in seen -%}
      {{ exceptions.raise_compiler_error("qar: column '" ~ c ~ "' is listed twice in columns; list it once") }}
    {%- endif -%}
    {%- do seen.append(c) -%}
  {%- endfor -%}
  {%- if p > columns | length -%}
    {{ exceptions.raise_compiler_error("qar: p = " ~ p ~ " is larger than the number of quasi-identifier columns (" ~ (columns | length) ~ "); use p = " ~ (columns | length) ~ " or name more columns") }}
  {%- endif -%}
  {%- set qis = [] -%}
  {%- for combo in modules.itertools.combinations(range(columns | length), p) -%}
    {%- set names = [] -%}
    {%- set exprs = [] -%}
    {%- for i in combo -%}
      {%- do names.append(columns[i]) -%}
      {%- do exprs.append(qar.quote_column(columns[i])) -%}
    {%- endfor -%}
    {%- do qis.append({'position': loop.index0, 'exprs': exprs, 'label': qar.string_literal(names | join(', '))}) -%}
  {%- endfor -%}
  {{ return(qis) }}
{%- endmacro %}

{#- p, alpha and pi_u as qar_sql.stats.evt.validate_parameters checks them, with its messages. -#}
{% macro check_parameters(p, alpha, pi_u) -%}
  {%- for name, value in [('p', p), ('alpha', alpha), ('pi_u', pi_u)] %}{% do qar.check_not_text('qar', name, value) %}{% endfor -%}
  {%- if p is not number or p is boolean or p != p | int or p < 1 -%}
    {{ exceptions.raise_compiler_error("qar: p = " ~ p ~ " is not a valid QI size; use a whole number of columns, at least 1") }}
  {%- endif -%}
  {%- for name, value, usual in [('alpha', alpha, '0.01'), ('pi_u', pi_u, '0.05')] -%}
    {%- if value is not number or value is boolean or value != value or value <= 0 or value >= 1 -%}
      {{ exceptions.raise_compiler_error("qar: " ~ name ~ " = " ~ value ~ " is outside (0, 1); use a probability such as " ~ usual) }}
    {%- endif -%}
  {%- endfor -%}
  {%- if not alpha < pi_u -%}
    {{ exceptions.raise_compiler_error("qar: alpha = " ~ alpha ~ " must be smaller than pi_u = " ~ pi_u ~ "; lower alpha or raise pi_u") }}
  {%- endif -%}
{%- endmacro %}

{#- Refuse N_p quasi-identifiers too few for pi_u, as qar_sql.stats.evt.check_n_qi: the type-8
    (1 - pi_u) quantile is then the largest theta, so nothing can exceed it, whatever the data. -#}
{% macro check_n_qi(n_qi, pi_u) -%}
  {%- set q = 1.0 - pi_u -%}
  {%- set third = 1.0 / 3.0 -%}
  {%- set v = n_qi * q + (third + q * (1.0 - third - third)) - 1.0 -%}
  {%- if v >= n_qi - 1 -%}
    {{ exceptions.raise_compiler_error("qar: N_p = " ~ n_qi ~ " quasi-identifiers is too small for pi_u = " ~ pi_u ~ ": the (1 - pi_u) quantile is then the largest theta and nothing can exceed it; use more quasi-identifiers (more columns or another p) or pi_u > " ~ ((2 / (3 * n_qi + 1)) | round(4))) }}
  {%- endif -%}
{%- endmacro %}
