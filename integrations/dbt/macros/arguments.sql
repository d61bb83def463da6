{#- A number written in quotes in YAML (threshold: "0.5") reaches a macro as text: refuse it with
    a sentence saying so, rather than "0.5 is not a number ... such as 0.5". So does one written
    with an exponent but without a '.' and a signed exponent (alpha: 1e-3): dbt's YAML (1.1) reads
    it as text though it has no quotes, and "quoted in the YAML ... write it without quotes, as
    alpha: 1e-3" asked for what the user had written. -#}
{% macro check_not_text(macro, name, value) -%}
  {%- if value is string and modules.re.match('^\\s*[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)[eE][-+]?[0-9]+\\s*$', value) -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "', not a number: YAML reads a number with an exponent as text unless it has a '.' and a signed exponent (1.0e-3); write it as a decimal, as " ~ name ~ ": " ~ (value | float)) }}
  {%- elif value is string and modules.re.match('^\\s*[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)\\s*$', value) -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "' (quoted in the YAML), not a number; write it without quotes, as " ~ name ~ ": " ~ value) }}
  {%- elif value is string -%}
    {#- (text that is no number: taking its quotes away would not make it one, threshold: abc) -#}
    {%- set example = {'threshold': '0.5', 'p': '3', 'alpha': '0.01', 'pi_u': '0.05', 'min_exceedances': '3'} -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "', not a number; " ~ name ~ " must be a number, as " ~ name ~ ": " ~ example.get(name, '0.5')) }}
  {%- endif -%}
{%- endmacro %}

{#- Each named column a column of the relation (the model under test, a ref): a misspelt name
    was "p = 3 is larger than the number of quasi-identifier columns" or the warehouse's own
    error, not the name. Case is compared loosely (DuckDB and Snowflake fold it); a relation given
    as SQL text, or dbt's parse (no warehouse yet), is not checked. -#}
{% macro check_columns_in(macro, relation, columns) -%}
  {%- if execute and relation is not string and relation is not none and columns is not string and columns is iterable and columns is not mapping -%}
    {%- set have = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
    {%- set lower = have | map('lower') | list -%}
    {%- if have | length > 0 -%}
      {%- for c in columns if c is string and c | lower not in lower -%}
        {{ exceptions.raise_compiler_error(macro ~ ": column '" ~ c ~ "' is not a column of " ~ relation ~ "; its columns are " ~ (have | join(', ')) ~ ". Name one of them, or leave columns out to take those with meta {qar: quasi_identifier}") }}
      {%- endfor -%}
    {%- endif -%}
  {%- endif -%}
{%- endmacro %}
