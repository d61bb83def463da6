{#- A number written in quotes in YAML (threshold: "0.5") reaches a macro as text: refuse it with
    a sentence saying so, rather than "0.5 is not a number ... such as 0.5". So does one written
    with an exponent but without a '.' and a signed exponent (alpha: 1e-3): dbt's YAML (1.1) reads
    it as text though it has no quotes, and "quoted in the YAML ... write it without quotes, as
    alpha: 1e-3" asked for what the user had written. -#}
{% macro check_not_text(macro, name, value) -%}
  {%- if value is string and modules.re.match('^\\s*[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)[eE][-+]?[0-9]+\\s*$', value) -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "', not a number: YAML reads a number with an exponent as text unless it has a '.' and a signed exponent (1.0e-3); write it as a decimal, as " ~ name ~ ": " ~ (value | float)) }}
  {%- elif value is string -%}
    {{ exceptions.raise_compiler_error(macro ~ ": " ~ name ~ " is the text '" ~ value ~ "' (quoted in the YAML), not a number; write it without quotes, as " ~ name ~ ": " ~ value) }}
  {%- endif -%}
{%- endmacro %}
